// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "sedpack/status.h"

namespace sedpack {

/// Check a path read from metadata: relative, non-empty, no `..` component, no NUL.
/// Backslashes are treated as separators. InvalidArgument naming `field` otherwise;
/// an absolute path or a `..` component also has StatusDetail::kPathEscape.
Status ValidateRelativePath(std::string_view path, std::string_view field);

/// Split a relative path into components ("a/b/c" -> {a,b,c}); "." and empty
/// components are dropped, backslashes count as separators.
std::vector<std::string> PathComponents(std::string_view path);
/// Join components with '/'.
std::string JoinPath(const std::vector<std::string>& components);

/// A lowercase 32-hex random id (uuid4().hex-like).
std::string RandomHex32();

/// Generates shard paths as the reference's PathGenerator(levels=4,
/// max_branching=1000, name_length=10): `levels-1` directories of `name_length`
/// hex characters, then a 32-hex file stem. A leaf directory receives at most
/// `max_branching` files; then a new leaf under the same parent, and so on up.
/// Not thread-safe.
class PathGenerator {
 public:
  PathGenerator(int levels = 4, int max_branching = 1000, int name_length = 10);
  /// Next relative path (no extension), e.g. "ab12.../cd34.../ef56.../<32hex>".
  std::string Next();

 private:
  std::string NewDirName();
  int levels_;
  int max_branching_;
  int name_length_;
  std::vector<std::string> dirs_;   // current directory per level
  std::vector<int> counts_;         // entries created in the current dir per level
};

}  // namespace sedpack
