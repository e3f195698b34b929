// A FIFO of nodes linked through one of their own pointer members: pushing,
// popping and splitting allocate nothing and cannot fail, so a queue can take
// work inside noexcept paths and under its lock. The nodes belong to whoever
// put them in; the list only links them.
#pragma once

#include <cstddef>
#include <utility>

namespace chronopool::detail {

template <class Node, Node* Node::*Link>
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
  std::size_t size() const noexcept { return size_; }

  void push_back(Node* n) noexcept {
    n->*Link = nullptr;
    if (tail_) {
      tail_->*Link = n;
    } else {
      head_ = n;
    }
    tail_ = n;
    ++size_;
  }

  /// Removes and returns the first node (the list must not be empty).
  Node* pop_front() noexcept {
    Node* const n = head_;
    head_ = n->*Link;
    if (head_ == nullptr) tail_ = nullptr;
    n->*Link = nullptr;
    --size_;
    return n;
  }

  /// Takes @p n out wherever it is; false when it is not in the list. O(n).
  bool remove(Node* n) noexcept {
    Node* prev = nullptr;
    for (Node* p = head_; p != nullptr; prev = p, p = p->*Link) {
      if (p != n) continue;
      (prev ? prev->*Link : head_) = n->*Link;
      if (tail_ == n) tail_ = prev;
      n->*Link = nullptr;
      --size_;
      return true;
    }
    return false;
  }

  /// Splits off the first @p n nodes (all when there are fewer).
  intrusive_list take_front(std::size_t n) noexcept {
    intrusive_list front;
    while (n-- > 0 && !empty()) front.push_back(pop_front());
    return front;
  }

  /// Calls @p f on every node, front to back; @p f must not relink them.
  template <class F>
  void for_each(F&& f) const {
    for (Node* n = head_; n != nullptr; n = n->*Link) f(*n);
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
