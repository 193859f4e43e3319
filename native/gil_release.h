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

// Whether the interpreter is shutting down (Py_IsFinalizing, private before Python 3.13).
inline bool finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

// Threads of this process working without the GIL now (neither waiting for it nor parked).
inline std::atomic<int> g_working{0};

class GilRelease {
 public:
  GilRelease() : state_(PyEval_SaveThread()) { g_working.fetch_add(1); }
  ~GilRelease() { restore(); }
  GilRelease(const GilRelease &) = delete;
  GilRelease &operator=(const GilRelease &) = delete;

  template <class F>
  bool with_gil(F call) {
    restore();
    const bool ok = call();
    state_ = PyEval_SaveThread();
    g_working.fetch_add(1);
    return ok;
  }

 private:
  // A daemon thread still scoring when the program's main thread ends: taking the GIL back once
  // the interpreter has begun to shut down ends the thread by pthread_exit before Python 3.14, and
  // that unwinding through this noexcept destructor aborted the whole process ("terminate called
  // without an active exception", exit status 134).  The thread waits here instead, for the
  // process's end, as Python 3.14 itself lets such a thread wait.  (Checked first; and caught, for a
  // thread that was already waiting for the GIL when the shutdown began: the handler is never left,
  // so the unwinding needs no rethrow.)
  void restore() noexcept {
    g_working.fetch_sub(1);
    if (finalizing()) park();
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
