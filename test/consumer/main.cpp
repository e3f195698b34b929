#include <chronopool/scheduled_thread_pool.hpp>

#include <chrono>

int main() {
    chronopool::scheduled_thread_pool pool(1);
    auto f = pool.schedule(std::chrono::milliseconds(1), [] { return 42; });
    return f.get() == 42 ? 0 : 1;
}
