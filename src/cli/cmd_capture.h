// SPDX-License-Identifier: Apache-2.0
// The capture commands (cmd_trs.cc, cmd_chipwhisperer.cc). Private to src/cli.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cli/cli_common.h"
#include "sedpack/capture/import.h"

namespace sedpack::cli {

int RunImportTrs(const std::vector<std::string>& args);
int RunInspectTrs(const std::vector<std::string>& args);
int RunExportTrs(const std::vector<std::string>& args);
int RunImportChipWhisperer(const std::vector<std::string>& args);
int RunInspectChipWhisperer(const std::vector<std::string>& args);

extern const CommandSpec kImportTrsSpec;
extern const CommandSpec kInspectTrsSpec;
extern const CommandSpec kExportTrsSpec;
extern const CommandSpec kImportChipWhispererSpec;
extern const CommandSpec kInspectChipWhispererSpec;

/// The options both importers share (-o, -c, -j, --memory-budget, --progress,
/// -q and the dataset_structure overrides).
void AddCaptureImportOptions(po::options_description* options);

/// The common tail of import-trs / import-chipwhisperer: `open` opens this
/// rank's inputs (every rank calls it), the config comes from --config or the
/// suggested mapping, then ImportCapture runs and rank 0 prints the summary.
/// `adjust` may change the suggested config (e.g. float32 traces).
int RunCaptureImport(std::string_view command, std::string_view key, const po::variables_map& vm,
                     const std::function<Result<std::vector<std::unique_ptr<CaptureInput>>>(std::vector<std::string>*)>& open,
                     const std::function<void(CaptureImportConfig*)>& adjust, CaptureImportOptions options);

/// Exit code for a failure reading a capture file: corrupt input is a
/// dataset problem (1), the rest as ExitCodeFor (input stage).
int ReportCaptureError(const Status& status);

}  // namespace sedpack::cli
