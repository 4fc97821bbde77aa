// SPDX-License-Identifier: Apache-2.0
// The core API in one include: statuses, types and values; datasets (create,
// open, packs); writing (Filler); reading (ExampleReader, ShardInfoIterator,
// ReadShard); checking (CheckDataset); the metadata models; the Comm interface
// with its one-rank SerialComm. Link sedpack::sedpack.
//
// The other public headers are included on their own: sedpack/index/ (sample
// index, fetch by number, elastic order), sedpack/generate/, sedpack/maintain/,
// sedpack/mpi/distributed_*.h (parallel write, verify, index over a Comm),
// sedpack/codecs/, and the optional modules
// sedpack/mpi/mpi_comm.h (sedpack::mpi) and sedpack/hdf5/ (sedpack::hdf5).
#pragma once

#include "sedpack/cancel.h"
#include "sedpack/comm/comm.h"
#include "sedpack/check/check.h"
#include "sedpack/dataset/commit.h"
#include "sedpack/dataset/dataset.h"
#include "sedpack/dataset/filler.h"
#include "sedpack/dataset/reader.h"
#include "sedpack/io/file.h"
#include "sedpack/io/pack.h"
#include "sedpack/metadata/json_value.h"
#include "sedpack/metadata/models.h"
#include "sedpack/shard/shard.h"
#include "sedpack/status.h"
#include "sedpack/types.h"
#include "sedpack/value.h"
