// SPDX-License-Identifier: Apache-2.0
// Precompiled once per build tree and reused by every library module and the
// command-line tool's library (src/CMakeLists.txt, SEDPACK_LIBRARY_PCH): the
// standard headers and nlohmann/json, which every source file would otherwise
// parse again. Sources still include what they use: a tree configured with
// -DSEDPACK_LIBRARY_PCH=OFF (the ThreadSanitizer tree is one) compiles without
// this header, so a missing include is still an error there.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
