// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// intrusive_list: the FIFO the timer shard keeps waits in (its inbox, fired
// bursts, delivery chunks). Splitting a burst into chunks where the collect
// noted their ends (split_through) must give exactly what walking it
// (take_front) gives.
#include <chronopool/detail/support/intrusive_list.hpp>

#include <boost/test/unit_test.hpp>

#include <cstddef>
#include <vector>

namespace cpd = chronopool::detail;

namespace {

struct node {
  int id = 0;
  node* next = nullptr;
};
using list = cpd::intrusive_list<node, cpd::member_link<node, &node::next>>;

std::vector<int> ids(const list& l) {
  std::vector<int> out;
  l.for_each([&](const node& n) { out.push_back(n.id); });
  return out;
}

std::vector<int> range(int from, int to) {
  std::vector<int> out;
  for (int i = from; i < to; ++i) out.push_back(i);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(intrusive_list_suite)

BOOST_AUTO_TEST_CASE(reverse_chain_turns_a_stack_taken_whole_oldest_first) {
  using link = cpd::member_link<node, &node::next>;
  BOOST_TEST(cpd::reverse_chain<link>(static_cast<node*>(nullptr)) == nullptr);
  std::vector<node> nodes(5);
  node* newest = nullptr;
  for (int i = 0; i < 5; ++i) {  // pushed as a lock-free stack is: newest first
    nodes[static_cast<std::size_t>(i)].id = i;
    nodes[static_cast<std::size_t>(i)].next = newest;
    newest = &nodes[static_cast<std::size_t>(i)];
  }
  std::vector<int> order;
  for (node* n = cpd::reverse_chain<link>(newest); n != nullptr; n = n->next) order.push_back(n->id);
  BOOST_TEST(order == range(0, 5), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(split_through_cuts_where_take_front_would) {
  constexpr std::size_t n = 37;
  std::vector<node> nodes(n);
  list walked, noted;
  std::vector<node*> ends;  // the 4th, 8th, ... node, as a collect notes them
  for (std::size_t i = 0; i < n; ++i) nodes[i].id = static_cast<int>(i);
  std::vector<node> copies = nodes;
  for (std::size_t i = 0; i < n; ++i) {
    walked.push_back(&nodes[i]);
    noted.push_back(&copies[i]);
    if ((i + 1) % 4 == 0) ends.push_back(&copies[i]);
  }
  BOOST_TEST(noted.front() == &copies[0]);
  for (node* end : ends) {
    list a = walked.take_front(4);
    list b = noted.split_through(end, 4);
    BOOST_TEST(ids(a) == ids(b));
    BOOST_TEST(b.size() == 4u);
    BOOST_TEST(end->next == nullptr);  // the chunk ends at its last node
    BOOST_TEST(walked.size() == noted.size());
    BOOST_TEST(ids(walked) == ids(noted));
  }
  BOOST_TEST(ids(noted) == range(36, 37));  // the rest, after the last full chunk
  BOOST_TEST(noted.front() == &copies[36]);
}

BOOST_AUTO_TEST_CASE(split_through_the_last_node_empties_the_list) {
  std::vector<node> nodes(8);
  list l;
  for (std::size_t i = 0; i < 8; ++i) {
    nodes[i].id = static_cast<int>(i);
    l.push_back(&nodes[i]);
  }
  list all = l.split_through(&nodes[7], 8);
  BOOST_TEST(l.empty());
  BOOST_TEST(l.size() == 0u);
  BOOST_TEST(l.front() == nullptr);
  BOOST_TEST(ids(all) == range(0, 8));
  // Both stay usable: the emptied list takes new nodes at its tail.
  node extra{99};
  l.push_back(&extra);
  BOOST_TEST(ids(l) == std::vector<int>{99});
  all.push_back(l.pop_front());
  BOOST_TEST(ids(all).back() == 99);
  BOOST_TEST(all.size() == 9u);
}

BOOST_AUTO_TEST_SUITE_END()
