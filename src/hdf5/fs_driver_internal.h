// SPDX-License-Identifier: Apache-2.0
// An HDF5 virtual file driver whose every open, read, write, truncate and
// close goes through a sedpack FileSystem (sedpack/io/file_system.h), so that
// HDF5 files are read and written like every other file of a job: through the
// FileSystem in its options, which tests replace by one that fails on purpose.
// The serial paths use it; the collective MPI-IO write keeps H5FD_mpio.
// Private to src/hdf5.
#pragma once

#include <hdf5.h>

#include <string>

#include "hdf5/h5_internal.h"
#include "sedpack/io/file_system.h"
#include "sedpack/status.h"

namespace sedpack::h5 {

/// The driver's id, registered with HDF5 on first use (once, thread-safe);
/// negative if HDF5 refused it.
hid_t FileSystemDriver();

/// A new file access list whose files are opened, read and written through
/// `fs` (nullptr: CurrentFileSystem() as it is now). I/O errors come back as
/// HDF5 errors whose message names the file and gives errno's text, e.g.
/// "out.h5: write of 1048576 bytes at 4096: No space left on device".
Result<Handle> FileAccessFor(FileSystem* fs);

/// The message of the last I/O error the driver met on this thread, or empty;
/// cleared by the call. HDF5 reports a failed read inside H5Dopen or H5Lexists
/// like a missing or malformed object: a caller asks this before calling it so.
std::string TakeIoError();

/// H5Fclose of `file`, made unable to fail on a file whose writes failed: a
/// failed H5Fclose leaves HDF5 1.10 holding a half-freed file that it closes
/// again at exit (a crash). A file of this driver that met a failed write
/// (flushed first, so that a failure shows) is one the caller has lost (the
/// error came back to it): the driver drops the rest of its writes so that
/// the close goes through.
void CloseFile(hid_t file);

}  // namespace sedpack::h5
