// SPDX-License-Identifier: Apache-2.0
// A temporary folder every rank of TestComm() agrees on: rank 0 makes it and
// broadcasts its name; the destructor waits for every rank before rank 0
// removes it.
#pragma once

#include <memory>
#include <string>

#include "mpi/test_comm.h"
#include "support/test_support.h"

namespace sedpack::testing {

class SharedDir {
 public:
  SharedDir() {
    std::string path;
    if (TestComm().rank() == 0) {
      tmp_ = std::make_unique<TempDir>();
      path = tmp_->path();
    }
    EXPECT_OK(TestComm().Bcast(&path, 0));
    path_ = path;
  }
  ~SharedDir() { (void)TestComm().Barrier(); }
  SharedDir(const SharedDir&) = delete;
  SharedDir& operator=(const SharedDir&) = delete;

  const std::string& path() const { return path_; }
  /// `<path>/<name>`.
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::unique_ptr<TempDir> tmp_;
  std::string path_;
};

}  // namespace sedpack::testing
