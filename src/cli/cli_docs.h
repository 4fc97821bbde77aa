// SPDX-License-Identifier: Apache-2.0
// Documents generated from the commands' option tables (CollectCommandOptions),
// so that the help, the bash completion and the man page never disagree. The
// build runs `sedpack --dump-completion` and `sedpack --dump-man`
// (cmake/GenerateCliDocs.cmake) and installs what they print.
#pragma once

#include <ostream>

namespace sedpack::cli {

/// One line per option: "COMMAND<TAB>--long<TAB>-s<TAB>VALUE<TAB>description"
/// (empty fields for no short name or a switch; VALUE in [] when optional).
int PrintOptionTables(std::ostream& os);
/// A bash completion script for `sedpack`: commands, then each command's options.
int PrintBashCompletion(std::ostream& os);
/// The man page sedpack(1), in roff.
int PrintManPage(std::ostream& os);

}  // namespace sedpack::cli
