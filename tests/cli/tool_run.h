// SPDX-License-Identifier: Apache-2.0
// Run the built `sedpack` binary as a child process (no shell) and keep its
// exit code and output, for the program tests of this folder.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace sedpack::testing {

struct Outcome {
  int code = -1;
  std::string out, err;
};

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Run the tool with `args` (no shell), its output captured in files of `dir`.
inline Outcome RunTool(const std::string& dir, std::vector<std::string> args) {
  args.insert(args.begin(), SEDPACK_BIN);
  const std::string out = dir + "/tool.out", err = dir + "/tool.err";
  const pid_t pid = fork();
  if (pid == 0) {
    const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int n = open("/dev/null", O_RDONLY);
    if (o < 0 || e < 0 || n < 0) _exit(127);
    dup2(o, 1);
    dup2(e, 2);
    dup2(n, 0);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return Outcome{WIFEXITED(status) ? WEXITSTATUS(status) : -1, Slurp(out), Slurp(err)};
}

}  // namespace sedpack::testing
