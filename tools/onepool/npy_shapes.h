// `--inputs x:file.npy` binds x's shape from the file's header, so `--shapes` is not needed for
// that input; a `--shapes` entry that says otherwise is an error naming both shapes.
#pragma once

#include <string>
#include <vector>

#include "tools/onepool/cli_common.h"

namespace onepool::cli {

/// The model flags with a `--shapes` entry added for each .npy file in `inputs` (name:path
/// items) whose input has none; an entry equal to the file's shape is kept. kInvalidArgument
/// when an entry differs ("input 'x': --shapes gives [2,784] but 'x.npy' holds [3,784]") or a
/// header cannot be read. Prints a note for each shape it binds.
Expected<ModelFlags> with_npy_shapes(const ModelFlags& flags,
                                     const std::vector<std::string>& inputs);

}  // namespace onepool::cli
