// Splitting command-line flag values (`--shapes`, `--dims`, `--values`) into their parts.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace onepool {

/// "a,b,,c" split at ',' -> {"a", "b", "", "c"}; "" -> {""}.
std::vector<std::string> split_text(std::string_view text, char separator);

/// Like split_text, but a separator inside [...] does not split: "x:[1,2],y:3" at ',' ->
/// {"x:[1,2]", "y:3"}.
std::vector<std::string> split_outside_brackets(std::string_view text, char separator);

}  // namespace onepool
