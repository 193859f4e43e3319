// The GIL released for an object's lifetime, shared by the extension's translation units
// (plexity_native.cpp, learned_reader.cpp): their work reads only buffers the caller holds, so
// other Python threads run meanwhile (e.g. Scrapy's reactor while its worker thread cleans a
// page); `with_gil` takes it back for the few calls into Python.
#ifndef PLEXITY_GIL_RELEASE_H
#define PLEXITY_GIL_RELEASE_H

#include <Python.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace plexity {

// Threads of this process working without the GIL now (neither waiting for it nor parked).
inline std::atomic<int> g_working{0};

class GilRelease {
 public:
  GilRelease() : state_(release()) {}
  ~GilRelease() { restore(); }
  GilRelease(const GilRelease &) = delete;
  GilRelease &operator=(const GilRelease &) = delete;

  template <class F>
  bool with_gil(F call) {
    restore();
    const bool ok = call();
    state_ = release();
    return ok;
  }

 private:
  // Counted while the GIL is still held: the shutdown, which holds it, then never misses a thread
  // that has let it go (counted after, a thread could start splitting a text just as exit() began).
  static PyThreadState *release() {
    g_working.fetch_add(1);
    return PyEval_SaveThread();
  }

  // A daemon thread still scoring when the program's main thread ends: taking the GIL back once
  // the interpreter has begun to shut down ends the thread by pthread_exit before Python 3.14, and
  // that unwinding through this noexcept destructor aborted the whole process ("terminate called
  // without an active exception", exit status 134).  The thread waits here instead, for the
  // process's end, as Python 3.14 itself lets such a thread wait: the unwinding is caught, and the
  // handler is never left, so it needs no rethrow.  CPython decides which thread must end: not
  // Py_IsFinalizing alone, which is also true in the thread that runs the shutdown (a __del__ that
  // cleans a text while the program's globals are cleared), and which must go on.
  void restore() noexcept {
    g_working.fetch_sub(1);
    try {
      PyEval_RestoreThread(state_);
    } catch (...) {
      park();
    }
  }

  [[noreturn]] static void park() noexcept {
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  }

  PyThreadState *state_;
};

// At the end of the interpreter's shutdown (Py_AtExit), before exit() runs the libraries'
// finalizers: wait (5 s at most) for the threads still working without the GIL to reach `park`.
// (exit() destroyed BlingFire's tables under a daemon thread still splitting a text: a segfault.)
inline void wait_for_working_threads() {
  for (int i = 0; i < 5000 && g_working.load() > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// In a child forked while other threads worked: those threads are not in it.
inline void forget_working_threads() { g_working.store(0); }

}  // namespace plexity

#endif  // PLEXITY_GIL_RELEASE_H
