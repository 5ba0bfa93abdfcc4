// Logging: what OnePool would otherwise keep to itself (import warnings, the optimization
// summary, fallbacks, the kernels a Session chose), handed to a callback the caller owns.
//
// There is no global logger: each LoadOptions and SessionOptions carries its own. No callback
// (the default) means silent. Session::run never logs; the one exception is a CUDA Session's
// first run, which reports a failed CUDA graph capture (kWarning) once.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

namespace onepool {

/// How much a message matters: kDebug (per-node detail), kInfo (one line per load or Session),
/// kWarning (accepted with a caveat, or a fallback taken).
enum class LogLevel : uint8_t { kDebug = 0, kInfo, kWarning };

/// "debug", "info" or "warning".
const char* log_level_name(LogLevel level);

/// Receives each message (one line, no trailing newline). Called on the thread that loads the
/// model or creates / runs the Session, never concurrently for one Model load or one Session;
/// the string_view is valid only during the call. It must not throw.
using Logger = std::function<void(LogLevel level, std::string_view message)>;

}  // namespace onepool
