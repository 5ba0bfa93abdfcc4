// The library a program runs with, as opposed to the headers it was compiled against.
#pragma once

namespace onepool {

/// The version of the OnePool library loaded at run time, "MAJOR.MINOR.PATCH". Compare it with
/// ONEPOOL_VERSION_STRING from <onepool/version.h> (the headers' version) to detect a program
/// running against a different libonepool.so than it was built with. Thread-safe; never null.
const char* library_version();

}  // namespace onepool
