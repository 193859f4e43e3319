// The GIL released for an object's lifetime, shared by the extension's translation units
// (plexity_native.cpp, learned_reader.cpp): their work reads only buffers the caller holds, so
// other Python threads run meanwhile (e.g. Scrapy's reactor while its worker thread cleans a
// page); `with_gil` takes it back for the few calls into Python.
#ifndef PLEXITY_GIL_RELEASE_H
#define PLEXITY_GIL_RELEASE_H

#include <Python.h>

namespace plexity {

class GilRelease {
 public:
  GilRelease() : state_(PyEval_SaveThread()) {}
  ~GilRelease() { PyEval_RestoreThread(state_); }
  GilRelease(const GilRelease &) = delete;
  GilRelease &operator=(const GilRelease &) = delete;

  template <class F>
  bool with_gil(F call) {
    PyEval_RestoreThread(state_);
    const bool ok = call();
    state_ = PyEval_SaveThread();
    return ok;
  }

 private:
  PyThreadState *state_;
};

}  // namespace plexity

#endif  // PLEXITY_GIL_RELEASE_H
