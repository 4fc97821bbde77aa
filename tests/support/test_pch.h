// SPDX-License-Identifier: Apache-2.0
// Precompiled once per build tree and reused by every test target
// (tests/CMakeLists.txt, SEDPACK_TEST_PCH): gtest, gmock, nlohmann/json and the
// standard headers most tests include. Test files still include what they use;
// this header only spares parsing the same 160,000 lines in every one of them.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
