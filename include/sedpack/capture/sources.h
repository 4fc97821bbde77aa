// SPDX-License-Identifier: Apache-2.0
// The capture inputs the importers read: a TRS file, the segments of a
// ChipWhisperer project. Each is a CaptureInput (import.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sedpack/capture/import.h"
#include "sedpack/capture/trs.h"

namespace sedpack {

/// A TRS file as rows of fields: "title" (str, if TITLE_SPACE > 0), "data"
/// (bytes (LENGTH_DATA,), if any), "data.<NAME>" per v2 trace parameter
/// definition (or legacy INPUT/OUTPUT/KEY objects) in its own dtype, and
/// "samples" (the coding's dtype, (NUMBER_SAMPLES,); SCALE_Y and the other axis
/// settings go into the suggested attribute's custom_metadata, never applied).
/// The header's notes (unknown tags, a count taken from the file size) are
/// appended to `notes`. The file is read through `fs` (nullptr:
/// CurrentFileSystem()), which must outlive the input.
Result<std::unique_ptr<CaptureInput>> OpenTrsInput(const std::string& path, TrsCountPolicy policy,
                                                   std::vector<std::string>* notes, FileSystem* fs = nullptr);

/// The header of a TRS file as JSON (what inspect-trs --json prints).
std::string TrsHeaderJson(const TrsHeader& header, std::uint64_t traces_in_file);

}  // namespace sedpack
