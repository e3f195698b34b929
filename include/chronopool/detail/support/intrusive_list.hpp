// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A FIFO of nodes linked through a pointer of their own: pushing,
// popping and splitting allocate nothing and cannot fail, so a queue can take
// work inside noexcept paths and under its lock. The nodes belong to whoever
// put them in; the list only links them.
#pragma once

#include <cstddef>
#include <utility>

namespace chronopool::detail {

/// The link of a node kept in a pointer member.
template <class Node, Node* Node::*Member>
struct member_link {
  static Node* get(const Node& n) noexcept { return n.*Member; }
  static void set(Node& n, Node* to) noexcept { n.*Member = to; }
};

/// Reverses a chain of nodes linked through @p Link and returns its new
/// head: a lock-free stack taken whole (newest first) comes out oldest first.
template <class Link, class Node>
Node* reverse_chain(Node* newest) noexcept {
  Node* oldest = nullptr;
  while (newest != nullptr) {
    Node* const older = Link::get(*newest);
    Link::set(*newest, oldest);
    oldest = std::exchange(newest, older);
  }
  return oldest;
}

/// Completes a waiter list linked newest first through @p Link, oldest
/// first: each node is unlinked (its link nulled) before @p complete(node)
/// is called, so a completion may free or relink it.
template <class Link, class Node, class Complete>
void complete_oldest_first(Node* newest, Complete&& complete) noexcept {
  Node* n = reverse_chain<Link>(newest);
  while (n != nullptr) {
    Node* const next = Link::get(*n);
    Link::set(*n, nullptr);
    complete(n);
    n = next;
  }
}

/// @p Link: get(node) and set(node, next), as member_link.
template <class Node, class Link>
class intrusive_list {
 public:
  intrusive_list() noexcept = default;
  // Move-only: two lists must never link the same nodes.
  intrusive_list(intrusive_list&& o) noexcept { swap(o); }
  intrusive_list& operator=(intrusive_list&& o) noexcept {
    intrusive_list(std::move(o)).swap(*this);
    return *this;
  }
  intrusive_list(const intrusive_list&) = delete;
  intrusive_list& operator=(const intrusive_list&) = delete;

  bool empty() const noexcept { return head_ == nullptr; }
  /// The first node, or null.
  Node* front() const noexcept { return head_; }
  Node* back() const noexcept { return tail_; }
  std::size_t size() const noexcept { return size_; }

  void push_back(Node* n) noexcept {
    Link::set(*n, nullptr);
    if (tail_) {
      Link::set(*tail_, n);
    } else {
      head_ = n;
    }
    tail_ = n;
    ++size_;
  }

  /// Removes and returns the first node (the list must not be empty).
  Node* pop_front() noexcept {
    Node* const n = head_;
    head_ = Link::get(*n);
    if (head_ == nullptr) tail_ = nullptr;
    Link::set(*n, nullptr);
    --size_;
    return n;
  }

  /// Takes @p n out wherever it is; false when it is not in the list. O(n).
  bool remove(Node* n) noexcept {
    Node* prev = nullptr;
    for (Node* p = head_; p != nullptr; prev = p, p = Link::get(*p)) {
      if (p != n) continue;
      if (prev) {
        Link::set(*prev, Link::get(*n));
      } else {
        head_ = Link::get(*n);
      }
      if (tail_ == n) tail_ = prev;
      Link::set(*n, nullptr);
      --size_;
      return true;
    }
    return false;
  }

  /// Splits off the first @p n nodes (all when there are fewer).
  intrusive_list take_front(std::size_t n) noexcept {
    intrusive_list taken;
    while (n-- > 0 && !empty()) taken.push_back(pop_front());
    return taken;
  }

  /// Splits off the front up to and including @p last, which must be the
  /// @p count th node: O(1), where take_front() reads every link on the way
  /// (a cache miss each when the nodes went cold since they were linked).
  intrusive_list split_through(Node* last, std::size_t count) noexcept {
    intrusive_list taken;
    taken.head_ = head_;
    taken.tail_ = last;
    taken.size_ = count;
    head_ = Link::get(*last);
    if (head_ == nullptr) tail_ = nullptr;
    Link::set(*last, nullptr);
    size_ -= count;
    return taken;
  }

  /// Calls @p f on every node, front to back; @p f must not relink them.
  template <class F>
  void for_each(F&& f) const {
    for (Node* n = head_; n != nullptr; n = Link::get(*n)) f(*n);
  }

  void swap(intrusive_list& o) noexcept {
    std::swap(head_, o.head_);
    std::swap(tail_, o.tail_);
    std::swap(size_, o.size_);
  }

 private:
  Node* head_ = nullptr;
  Node* tail_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace chronopool::detail
