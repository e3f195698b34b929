// Page mappings for the deadline index's large buffers. See detail/mapped_allocator.hpp.
#include <chronopool/detail/mapped_allocator.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>

namespace chronopool::detail {

namespace {

std::size_t whole_pages(std::size_t bytes) noexcept {
  static const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

std::atomic<std::size_t> mapped_total{0};

}  // namespace

void* map_pages(std::size_t bytes) {
  const std::size_t size = whole_pages(bytes);
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  mapped_total.fetch_add(size, std::memory_order_relaxed);
  return p;
}

void unmap_pages(void* p, std::size_t bytes) noexcept {
  const std::size_t size = whole_pages(bytes);
  ::munmap(p, size);
  mapped_total.fetch_sub(size, std::memory_order_relaxed);
}

std::size_t mapped_bytes() noexcept { return mapped_total.load(std::memory_order_relaxed); }

}  // namespace chronopool::detail
