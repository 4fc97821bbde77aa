// SPDX-License-Identifier: Apache-2.0
// The MPI part of the module (built with SEDPACK_HAVE_MPI): a collective
// filler and check over the world communicator, which is started on first use.
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "binding_internal.h"
#include "sedpack/check/verify.h"
#include "sedpack/mpi/distributed_write.h"
#include "sedpack/mpi/mpi_comm.h"

namespace sedpack_python {

namespace {

// ---- MPI: one session per process, started on first use ---------------------------

std::unique_ptr<sp::MpiSession>& MpiSessionSlot() {
  static auto* slot = new std::unique_ptr<sp::MpiSession>();  // never destroyed: atexit ends it
  return *slot;
}

/// The world communicator. MPI is initialised here unless the application (or
/// mpi4py) already did; MpiSession checks MPI_Initialized, so MPI is never
/// initialised twice, and finalised at exit only if it was initialised here.
sp::Comm& MpiWorld() {
  auto& slot = MpiSessionSlot();
  if (!slot) {
    slot = Unwrap(sp::MpiSession::Start(nullptr, nullptr));
    py::module_::import("atexit").attr("register")(py::cpp_function([] { MpiSessionSlot().reset(); }));
  }
  return slot->comm();
}

/// `with sedpack_hpc.distributed_filler(path, ...) as f:` on every rank of an
/// MPI job: each rank writes its own subtree; leaving the block is the
/// collective Finish (merge on rank 0). A rank leaving by an exception marks
/// itself failed, so every rank raises and nothing is published.
class PyDistributedFiller {
 public:
  PyDistributedFiller(std::string root, sp::DistributedWriteOptions options, bool skip_kept)
      : root_(std::move(root)), options_(std::move(options)), skip_kept_(skip_kept) {}

  PyDistributedFiller& Enter() {
    if (writer_) throw std::runtime_error("distributed_filler: already entered");
    sp::Comm& comm = MpiWorld();
    std::optional<sp::Result<std::unique_ptr<sp::DistributedWriter>>> made;
    {
      py::gil_scoped_release nogil;
      made = sp::DistributedWriter::Open(comm, root_, options_);
    }
    writer_ = Unwrap(std::move(*made));
    std::array<std::uint64_t, 3> kept{};
    for (sp::Split s : sp::AllSplits()) kept[static_cast<std::size_t>(s)] = writer_->kept_examples(s);
    kept_.Set(kept, skip_kept_);
    kept_shards_ = writer_->kept_shards();
    return *this;
  }

  void WriteExample(const py::dict& values, const std::string& split, py::handle custom_metadata) {
    if (!writer_) throw std::runtime_error("write_example: use the filler in a `with` block");
    const sp::Split s = ToSplit(split);
    if (kept_.Ignore(s)) return;
    ExampleValues ex = ConvertExample(writer_->dataset()->schema(), values, custom_metadata);
    sp::Status st;
    {
      py::gil_scoped_release nogil;
      st = writer_->WriteExample(s, ex.views, ex.meta ? &*ex.meta : nullptr);
    }
    Check(st);
  }

  bool Exit(py::handle exc_type, py::handle exc, py::handle) {
    std::unique_ptr<sp::DistributedWriter> writer = std::move(writer_);
    if (!writer) return false;
    // A resumable job keeps its journaled shards for the next run.
    if (!exc_type.is_none() && !writer->failed()) {
      writer->Fail(sp::Status::Internal("Python exception: " + std::string(py::str(exc))));
    }
    sp::Status st;
    {
      py::gil_scoped_release nogil;
      st = writer->Finish();  // collective
      writer.reset();
    }
    if (exc_type.is_none()) Check(st);
    return false;
  }

  std::string job_id() const { return writer_ ? writer_->job_id() : std::string(); }
  /// This rank's kept examples; resumed_shards is over all ranks.
  py::dict resumed_examples() const { return kept_.AsDict(); }
  std::uint64_t resumed_shards() const { return kept_shards_; }

 private:
  std::string root_;
  sp::DistributedWriteOptions options_;
  bool skip_kept_ = false;
  std::unique_ptr<sp::DistributedWriter> writer_;
  KeptExamples kept_;
  std::uint64_t kept_shards_ = 0;
};

}  // namespace

void BindMpi(py::module_& m) {
  py::class_<PyDistributedFiller>(m, "DistributedFiller",
                                  "What distributed_filler() returns on each rank: a DatasetFiller for this rank's "
                                  "subtree. Leaving its `with` block is collective (rank 0 merges every rank's "
                                  "lists); a rank leaving by an exception makes every rank raise PeerAbortedError.")
      .def("__enter__", &PyDistributedFiller::Enter, py::return_value_policy::reference_internal,
           "Open this rank's writer (collective); returns the filler.")
      .def("__exit__", &PyDistributedFiller::Exit, py::arg("exc_type"), py::arg("exc_value"), py::arg("traceback"),
           "The collective finish: publishes what every rank wrote, or nothing if a rank failed.")
      .def(
          "write_example",
          [](PyDistributedFiller& f, const py::dict& values, const std::string& split,
             Hinted<hint::JsonDict> custom_metadata) { f.WriteExample(values, split, custom_metadata); },
          py::arg("values"), py::arg("split"), py::arg("custom_metadata") = py::none(),
          "Write one example from this rank, as DatasetFiller.write_example.")
      .def_property_readonly("job_id", &PyDistributedFiller::job_id, "The job's id (the one given, or a random one drawn on rank 0); '' outside the block.")
      .def_property_readonly("resumed_examples", &PyDistributedFiller::resumed_examples,
                             "This rank's examples an earlier run of the job finished ({split: n}).")
      .def_property_readonly("resumed_shards", &PyDistributedFiller::resumed_shards,
                             "The shards of all ranks an earlier run of the job finished and this run kept.");
  m.def(
      "distributed_filler",
      [](Hinted<hint::Path> path, Hinted<hint::MetadataLike> metadata, Hinted<hint::StructureLike> dataset_structure,
         int concurrency, std::string job_id, bool resume, bool restart, Hinted<hint::JsonDict> job_parameters,
         bool skip_kept) {
        sp::DistributedWriteOptions o;
        o.filler.concurrency = concurrency;
        o.job_id = std::move(job_id);
        if (!dataset_structure.obj.is_none()) {
          o.create_metadata = ToMetadata(metadata);
          o.create_structure = ToStructure(dataset_structure);
        }
        if (resume) {
          if (o.job_id.empty()) throw py::value_error("distributed_filler: resume=True needs a job_id");
          o.resume_parameters = JobParameters("python distributed filler", MpiWorld().size(), job_parameters);
          o.restart = restart;
        } else if (restart || skip_kept || !job_parameters.obj.is_none()) {
          throw py::value_error("distributed_filler: restart, job_parameters and skip_kept need resume=True");
        }
        return std::make_unique<PyDistributedFiller>(PathString(path), std::move(o), skip_kept);
      },
      "Collective: a filler for every rank of the MPI job (creates the dataset if it does not exist "
      "and dataset_structure is given). resume=True (with a job_id): every rank journals its finished "
      "shards, and the same job run again keeps them (resumed_examples).",
      py::arg("path"), py::arg("metadata") = py::none(), py::arg("dataset_structure") = py::none(),
      py::arg("concurrency") = 0, py::arg("job_id") = "", py::kw_only(), py::arg("resume") = false,
      py::arg("restart") = false, py::arg("job_parameters") = py::none(), py::arg("skip_kept") = false);
  m.def(
      "distributed_check",
      [](Hinted<hint::Path> path, Hinted<hint::Strings> hash_checksums_values) {
        sp::VerifyOptions o;
        for (py::handle h : hash_checksums_values.obj) o.check.expected_root_checksums.push_back(py::str(h));
        sp::Comm& comm = MpiWorld();
        const std::string root = PathString(path);
        std::optional<sp::Result<sp::CheckReport>> r;
        {
          py::gil_scoped_release nogil;
          r = sp::VerifyDataset(comm, root, o);
        }
        RaiseIfProblems(Unwrap(std::move(*r)), root);
      },
      "Collective: Dataset.check() with the files split between the ranks.", py::arg("path"),
      py::arg("hash_checksums_values") = py::tuple());
  m.def(
      "mpi_rank", [] { return MpiWorld().rank(); },
      "This process's rank in the MPI world communicator (MPI is started on first use).");
  m.def(
      "mpi_size", [] { return MpiWorld().size(); },
      "The number of processes in the MPI world communicator (MPI is started on first use).");
  m.def(
      "mpi_barrier",
      [] {
        sp::Comm& comm = MpiWorld();
        sp::Status st;
        {
          py::gil_scoped_release nogil;
          st = comm.Barrier();
        }
        Check(st);
      },
      "Wait until every rank of the MPI world communicator is here.");
}

}  // namespace sedpack_python
