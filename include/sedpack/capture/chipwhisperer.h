// SPDX-License-Identifier: Apache-2.0
// ChipWhisperer projects: `NAME.cwp` (INI) whose [Trace Management] section
// lists trace segments (tracefileN = path\to\config_PREFIX.cfg, enabledN =
// True), each segment a config (INI, [Trace Config] numTraces, prefix, ...)
// beside its .npy arrays PREFIXtraces.npy (float64 (rows, points)),
// PREFIXtextin.npy / textout.npy / keylist.npy (uint8 (rows, 16)), ... The
// arrays may hold more rows than numTraces (ChipWhisperer grows them in
// steps and saves them whole): numTraces rows are used. A project may also
// come as a .zip of that tree.
//
// Only the .npy header dict is parsed (descr, fortran_order, shape); object
// arrays (pickled Python objects, e.g. knownkey.npy) are never unpickled:
// they are skipped with a note.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sedpack/capture/import.h"
#include "sedpack/status.h"

namespace sedpack {

/// One .npy array of a segment.
struct CwArrayInfo {
  std::string name;                  ///< "traces", "textin", ... (file name without prefix and .npy)
  std::string file;                  ///< path inside the project
  std::string descr;                 ///< numpy descr, "<f8"
  std::vector<std::uint64_t> shape;
  bool skipped = false;              ///< not importable (see note)
  std::string note;
};

struct CwSegment {
  int index = 0;                     ///< N of tracefileN
  std::string config_file;           ///< path inside the project
  bool enabled = true;
  std::uint64_t num_traces = 0;
  std::vector<std::pair<std::string, std::string>> config;  ///< [Trace Config] entries
  std::vector<CwArrayInfo> arrays;
};

struct CwProject {
  std::string path;
  bool zipped = false;
  std::vector<CwSegment> segments;   ///< every segment listed, enabled or not
  std::vector<std::string> notes;
};

/// Parse INI text: [section] headers, `key = value` lines, `#`/`;` comments.
/// Keys keep their case; later duplicates win.
Result<std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>>> ParseIni(
    std::string_view text, std::string_view where);

/// A path from a project file (backslashes allowed) made relative to the
/// project: InvalidArgument for an absolute path, a drive letter or any "..".
Result<std::string> CwRelativePath(std::string_view raw, std::string_view where);

/// Read the project's structure (no array data), through `fs` (nullptr:
/// CurrentFileSystem()).
Result<CwProject> InspectChipWhisperer(const std::string& path, FileSystem* fs = nullptr);

/// One CaptureInput per enabled segment, in tracefile order, with fields
/// "traces", "textin", "textout", "keylist", ... (every non-skipped array);
/// notes (skipped arrays, disabled segments) are appended to `notes`. The
/// project is read through `fs` (nullptr: CurrentFileSystem()), which must
/// outlive the inputs.
Result<std::vector<std::unique_ptr<CaptureInput>>> OpenChipWhispererInputs(const std::string& path,
                                                                          std::vector<std::string>* notes,
                                                                          FileSystem* fs = nullptr);

}  // namespace sedpack
