// Session::create's steps (prepare, plan, bind) on a backend the caller made: the way tests run
// a Session over a backend that injects failures (tests/runtime/backend_failure_test.cc).
#pragma once

#include <memory>

#include "onepool/session.h"
#include "runtime/backend.h"

namespace onepool {

/// Declared in onepool/session.h (as Session's friend); `backend` serves options.device. Fails
/// with whatever a step of the backend returns, the backend destroyed with the failed Session.
Expected<std::unique_ptr<Session>> create_session_with_backend(std::shared_ptr<const Model> model,
                                                               const SessionOptions& options,
                                                               std::unique_ptr<Backend> backend);

}  // namespace onepool
