// SPDX-License-Identifier: Apache-2.0
// Dataset (open, create, check, read, fetch by index) and its filler: the
// reference's sedpack.io.Dataset over the library's Dataset, Filler and
// ExampleReader.
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "iterators_internal.h"
#include "sedpack/index/fetch.h"
#include "sedpack/mpi/distributed_write.h"

namespace sedpack_python {

namespace {

/// The random seed used when none is given (the reference's shuffles are unseeded).
std::uint64_t FreshSeed() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

/// How a resumable filler names and checks its job.
struct FillerResume {
  std::string job_id;
  std::vector<std::pair<std::string, std::string>> parameters;
  bool restart = false;
  bool skip_kept = false;
};

/// `with ds.filler() as f: f.write_example(...)`. Leaving the block normally
/// finishes the filler (lists and dataset_info.json are written); leaving it
/// by an exception drops it, so only unreferenced shard files remain.
/// Resumable (job_id given): the shards go through the journaled writer of
/// parallel jobs, here over one process, so that the shards an interrupted run
/// finished are kept by the next run of the same job.
class PyFiller {
 public:
  PyFiller(std::shared_ptr<sp::Dataset> ds, sp::FillerOptions options, std::optional<FillerResume> resume)
      : ds_(std::move(ds)), options_(std::move(options)), resume_(std::move(resume)) {}

  PyFiller& Enter() {
    if (filler_ || writer_) throw std::runtime_error("filler: already entered");
    if (resume_) return EnterResumable();
    std::optional<sp::Result<std::unique_ptr<sp::Filler>>> made;
    {
      py::gil_scoped_release nogil;
      made = sp::Filler::Make(ds_, options_);
    }
    filler_ = Unwrap(std::move(*made));
    return *this;
  }

  bool Exit(py::handle exc_type, py::handle exc, py::handle tb) {
    if (writer_) return ExitResumable(exc_type, exc, tb);
    std::unique_ptr<sp::Filler> filler;
    {
      py::gil_scoped_release nogil;
      std::lock_guard<std::mutex> lock(mu_);
      filler = std::move(filler_);
    }
    if (!filler) return false;
    sp::Status st;
    {
      py::gil_scoped_release nogil;
      if (exc_type.is_none()) st = filler->Finish();
      if (st.ok() && exc_type.is_none()) {
        const auto& infos = filler->updated_infos();
        updated_infos_.insert(updated_infos_.end(), infos.begin(), infos.end());
      }
      filler.reset();  // waits for the shard writers
    }
    if (exc_type.is_none()) Check(st);
    return false;
  }

  /// The lists the finished blocks of this filler wrote, for a coordinator's commit (`write_config`),
  /// as the reference's get_updated_infos().
  const std::vector<sp::ShardListInfo>& updated_infos() const { return updated_infos_; }

  void WriteExample(const py::dict& values, const std::string& split, py::handle custom_metadata) {
    if (!filler_ && !writer_) throw std::runtime_error("write_example: use the filler in a `with` block");
    const sp::Split s = ToSplit(split);
    ExampleValues ex = ConvertExample(ds_->schema(), values, custom_metadata);
    sp::Status st;
    {
      py::gil_scoped_release nogil;
      std::lock_guard<std::mutex> lock(mu_);  // Filler is not thread-safe
      if (writer_) {
        if (!kept_.Ignore(s)) {
          st = writer_->WriteExample(s, ex.views, ex.meta ? &*ex.meta : nullptr);
          if (st.ok()) ++written_;
        }
      } else {
        st = filler_ ? filler_->WriteExample(s, ex.views, ex.meta ? &*ex.meta : nullptr)
                     : sp::Status::InvalidArgument("write_example: the filler was closed");
      }
    }
    Check(st);
  }

  std::uint64_t examples_written() const { return filler_ ? filler_->examples_written() : written_; }
  py::dict resumed_examples() const { return kept_.AsDict(); }
  std::uint64_t resumed_shards() const { return kept_shards_; }
  std::string job_id() const { return resume_ ? resume_->job_id : std::string(); }
  const std::string& root() const { return ds_->root(); }
  bool open() const { return filler_ != nullptr || writer_ != nullptr; }

 private:
  PyFiller& EnterResumable() {
    sp::DistributedWriteOptions o;
    o.filler = options_;
    o.job_id = resume_->job_id;
    o.resume_parameters = resume_->parameters;
    o.restart = resume_->restart;
    std::optional<sp::Result<std::unique_ptr<sp::DistributedWriter>>> made;
    {
      py::gil_scoped_release nogil;
      made = sp::DistributedWriter::Open(comm_, ds_->root(), o);
    }
    writer_ = Unwrap(std::move(*made));
    std::array<std::uint64_t, 3> kept{};
    for (sp::Split s : sp::AllSplits()) kept[static_cast<std::size_t>(s)] = writer_->kept_examples(s);
    kept_.Set(kept, resume_->skip_kept);
    kept_shards_ = writer_->kept_shards();
    return *this;
  }

  // An exception keeps the journaled shards for the next run; a normal exit
  // commits the job and reloads the dataset's metadata.
  bool ExitResumable(py::handle exc_type, py::handle exc, py::handle) {
    std::unique_ptr<sp::DistributedWriter> writer;
    {
      py::gil_scoped_release nogil;
      std::lock_guard<std::mutex> lock(mu_);
      writer = std::move(writer_);
    }
    if (!exc_type.is_none()) writer->Fail(sp::Status::Internal("Python exception: " + std::string(py::str(exc))));
    sp::Status st;
    {
      py::gil_scoped_release nogil;
      st = writer->Finish();
      writer.reset();
      if (st.ok() && exc_type.is_none()) st = ds_->Reload();
    }
    if (exc_type.is_none()) Check(st);
    return false;
  }

  std::shared_ptr<sp::Dataset> ds_;
  sp::FillerOptions options_;
  std::optional<FillerResume> resume_;
  std::mutex mu_;
  std::unique_ptr<sp::Filler> filler_;
  std::vector<sp::ShardListInfo> updated_infos_;
  sp::SerialComm comm_;
  std::unique_ptr<sp::DistributedWriter> writer_;
  KeptExamples kept_;
  std::uint64_t kept_shards_ = 0;
  std::uint64_t written_ = 0;
};

// The first field in which an existing dataset's structure (`have`) and the
// one a Dataset.create(..., exist_ok=True) call asks for (`want`) differ, as
// "<field>: the dataset has <a>, this call <b>"; empty if they agree.
std::string StructureDifference(const sp::DatasetStructure& have, const sp::DatasetStructure& want) {
  auto differ = [](const std::string& field, const std::string& a, const std::string& b) {
    return a == b ? std::string() : field + ": the dataset has " + a + ", this call " + b;
  };
  auto hashes = [](const sp::DatasetStructure& st) {
    std::string out;
    for (sp::HashAlgorithm h : st.hash_checksum_algorithms) out += (out.empty() ? "" : ",") + std::string(sp::HashAlgorithmName(h));
    return out;
  };
  auto attribute = [](const sp::Attribute& a) {
    std::string out = a.name + " " + a.dtype + "[";
    for (std::size_t i = 0; i < a.shape.size(); ++i) out += (i ? "," : "") + std::to_string(a.shape[i]);
    return out + "]";
  };
  std::string d = differ("examples_per_shard", std::to_string(have.examples_per_shard), std::to_string(want.examples_per_shard));
  if (d.empty()) d = differ("compression", std::string(sp::CompressionName(have.compression)), std::string(sp::CompressionName(want.compression)));
  if (d.empty()) {
    d = differ("shard_file_type", std::string(sp::ShardFileTypeName(have.shard_file_type)),
               std::string(sp::ShardFileTypeName(want.shard_file_type)));
  }
  if (d.empty()) d = differ("hash_checksum_algorithms", hashes(have), hashes(want));
  const auto& ha = have.saved_data_description;
  const auto& wa = want.saved_data_description;
  for (std::size_t i = 0; d.empty() && i < std::max(ha.size(), wa.size()); ++i) {
    d = differ("saved_data_description[" + std::to_string(i) + "]", i < ha.size() ? attribute(ha[i]) : "nothing",
               i < wa.size() ? attribute(wa[i]) : "nothing");
  }
  return d;
}

class PyDataset {
 public:
  explicit PyDataset(std::shared_ptr<sp::Dataset> ds) : ds_(std::move(ds)) {}

  static PyDataset Open(py::handle path) {
    const std::string root = PathString(path);
    std::optional<sp::Result<std::shared_ptr<sp::Dataset>>> r;
    {
      py::gil_scoped_release nogil;
      r = sp::Dataset::Open(root);
    }
    return PyDataset(Unwrap(std::move(*r)));
  }

  // exist_ok: a dataset already at `path` is opened instead, if its structure
  // is the one asked for (a resumable script's rerun finds the dataset its
  // first run created); another structure raises ValueError naming the field.
  static PyDataset Create(py::handle path, py::handle metadata, py::handle structure, bool exist_ok) {
    const std::string root = PathString(path);
    sp::Metadata m = ToMetadata(metadata);
    sp::DatasetStructure s = ToStructure(structure);
    const sp::DatasetStructure wanted = s;
    std::optional<sp::Result<std::shared_ptr<sp::Dataset>>> r;
    std::optional<sp::Result<std::shared_ptr<sp::Dataset>>> existing;
    {
      py::gil_scoped_release nogil;
      r = sp::Dataset::Create(root, std::move(m), std::move(s));
      if (exist_ok && !r->ok() && r->status().code() == sp::StatusCode::kAlreadyExists) existing = sp::Dataset::Open(root);
    }
    if (existing && existing->ok()) {
      const std::string difference = StructureDifference((**existing)->info().dataset_structure, wanted);
      if (!difference.empty()) {
        throw py::value_error("Dataset.create(exist_ok=True): the dataset at " + root +
                              " has another structure (" + difference + ")");
      }
      return PyDataset(std::move(*existing).value());
    }
    return PyDataset(Unwrap(std::move(*r)));
  }

  const std::shared_ptr<sp::Dataset>& ds() const { return ds_; }

  py::tuple MetadataChecksums() const {
    std::optional<sp::Result<std::vector<std::string>>> r;
    {
      py::gil_scoped_release nogil;
      r = ds_->MetadataChecksums();
    }
    return StringsTuple(Unwrap(std::move(*r)));
  }

  void CheckIntegrity(py::handle hash_checksums_values) const {
    sp::CheckOptions options;
    for (py::handle h : hash_checksums_values) options.expected_root_checksums.push_back(py::str(h));
    std::optional<sp::Result<sp::CheckReport>> r;
    {
      py::gil_scoped_release nogil;
      r = sp::CheckDataset(ds_->root(), options);
    }
    RaiseIfProblems(Unwrap(std::move(*r)), ds_->root());
  }

  std::unique_ptr<NumpyIterator> Iterate(const std::string& split, py::object process, std::optional<std::size_t> shards,
                                         std::optional<std::size_t> type_limit, py::object shard_filter,
                                         bool repeat, std::size_t shuffle, std::optional<std::uint64_t> seed,
                                         int prefetch, py::object verify_hashes, std::size_t batch_size) {
    sp::ReadOptions o;
    // The reference ignores limits of 0 (`if shards:`; "Ignored when None. If non-zero ...").
    if (shards && *shards > 0) o.max_shards = shards;
    if (type_limit && *type_limit > 0) o.custom_metadata_type_limit = type_limit;
    o.repeat = repeat;
    o.shuffle_buffer = shuffle;
    o.seed = seed ? *seed : FreshSeed();
    o.prefetch_shards = prefetch;
    // True (the checks sidecar's fast checksums when fresh, else the recorded
    // hashes), False, or "strict" (the recorded hashes always).
    if (py::isinstance<py::str>(verify_hashes)) {
      if (verify_hashes.cast<std::string>() != "strict") {
        throw py::value_error("verify_hashes must be True, False or \"strict\"");
      }
      o.verify_hashes = true;
      o.strict_hashes = true;
    } else {
      o.verify_hashes = verify_hashes.cast<bool>();
    }
    return std::make_unique<NumpyIterator>(ds_, ToSplit(split), std::move(o), std::move(shard_filter),
                                           std::move(process), batch_size, o.seed);
  }

  /// The shards of a split (every split for None), in the reference's order,
  /// each shards_list.json checked against the hash its parent records.
  std::vector<sp::ShardInfo> Shards(const std::optional<std::string>& split) const {
    std::vector<sp::Split> splits;
    if (split) {
      splits.push_back(ToSplit(*split));
    } else {
      for (const auto& entry : ds_->info().splits) splits.push_back(entry.first);
    }
    std::vector<sp::ShardInfo> out;
    for (sp::Split s : splits) {
      std::optional<sp::Result<std::vector<sp::ShardInfo>>> r;
      {
        py::gil_scoped_release nogil;
        r = sp::ListShards(ds_, s, /*verify_hashes=*/true);
      }
      for (auto& shard : Unwrap(std::move(*r))) out.push_back(std::move(shard));
    }
    return out;
  }

  /// The reference's write_config(updated_infos): merge the lists other fillers
  /// wrote (auto_update_dataset=False) and rewrite dataset_info.json.
  sp::FileInfo WriteConfig(const std::optional<std::vector<sp::ShardListInfo>>& updated_infos) {
    std::optional<sp::Result<sp::FileInfo>> r;
    {
      py::gil_scoped_release nogil;
      r = ds_->WriteConfig(updated_infos ? *updated_infos : std::vector<sp::ShardListInfo>());
    }
    return Unwrap(std::move(*r));
  }

  std::shared_ptr<const sp::SampleIndex> Index() {
    if (index_) return index_;
    std::optional<sp::Result<std::shared_ptr<const sp::SampleIndex>>> r;
    {
      py::gil_scoped_release nogil;
      r = sp::OpenIndex(ds_);
    }
    auto index = Unwrap(std::move(*r));
    if (!index_) index_ = index;
    return index_;
  }

  py::dict Get(const std::string& split, std::uint64_t i) {
    const sp::Split s = ToSplit(split);
    if (!fetcher_) {
      auto index = Index();
      std::optional<sp::Result<std::unique_ptr<sp::ExampleFetcher>>> r;
      {
        py::gil_scoped_release nogil;
        // Verified fetches through the checks sidecar read single examples,
        // which needs the shard cache off.
        sp::FetchOptions fo;
        if (sp::FetchReadsExamplesAlone(*ds_, fo)) fo.cache_bytes = 0;
        r = sp::ExampleFetcher::Make(ds_, index, fo);
      }
      auto fetcher = std::shared_ptr<sp::ExampleFetcher>(Unwrap(std::move(*r)));
      if (!fetcher_) fetcher_ = fetcher;
    }
    std::shared_ptr<sp::ExampleFetcher> fetcher = fetcher_;
    std::optional<sp::Result<sp::Example>> r;
    {
      py::gil_scoped_release nogil;
      r = fetcher->Get(s, i);
    }
    sp::Example e = Unwrap(std::move(*r));
    ExampleConverter conv(*ds_);
    return conv.ToDict(e);
  }

  std::unique_ptr<ElasticIterator> Elastic(const std::string& split, std::uint64_t seed,
                                           std::uint64_t shards_per_block, std::uint32_t rank,
                                           std::uint32_t num_readers, bool repeat, std::uint64_t epoch,
                                           int prefetch, Hinted<hint::ProcessRecord> process,
                                           std::uint32_t group_size, std::uint64_t split_unit,
                                           Hinted<hint::EqualCounts> equal_counts, bool shuffle,
                                           Hinted<hint::VerifyHashes> verify_hashes, Hinted<hint::State> state) {
    sp::ElasticReadOptions o;
    ApplyLayout(o, group_size, split_unit, equal_counts, shuffle);
    ApplyVerifyHashes(o, verify_hashes);
    o.seed = seed;
    o.epoch = epoch;
    o.shards_per_block = shards_per_block;
    o.rank = rank;
    o.num_readers = num_readers;
    o.repeat = repeat;
    o.prefetch_shards = prefetch;
    auto it = std::make_unique<ElasticIterator>(ds_, Index(), ToSplit(split), o, std::move(process.obj));
    if (!state.obj.is_none()) it->LoadStateDict(state.obj.cast<py::dict>());
    return it;
  }

 private:
  std::shared_ptr<sp::Dataset> ds_;
  std::shared_ptr<const sp::SampleIndex> index_;
  std::shared_ptr<sp::ExampleFetcher> fetcher_;
};

}  // namespace

void RaiseIfProblems(const sp::CheckReport& report, const std::string& root) {
  if (report.ok()) return;
  // Files are named by their full path, as the reference's check() names them.
  std::string prefix = root;
  if (!prefix.empty() && prefix.back() != '/') prefix += '/';
  std::string msg = "dataset check failed (" + std::to_string(report.error_count()) + " problems):";
  for (const auto& p : report.problems) {
    if (!p.warning()) msg += "\n  " + (p.path.empty() ? root : prefix + p.path) + ": " + p.message;
  }
  throw py::value_error(msg);
}

namespace {

/// `<Dataset '/data/traces' (fb, ZSTD; trace, key): train 1000 examples in 4 shards>`: what
/// dataset_info.json says (already in memory; nothing is read).
std::string DatasetRepr(py::handle self) {
  const sp::DatasetInfo& info = self.cast<const PyDataset&>().ds()->info();
  const auto& st = info.dataset_structure;
  std::string out = "<" + std::string(py::str(py::type::handle_of(self).attr("__name__"))) + " " +
                    std::string(py::repr(py::str(self.cast<const PyDataset&>().ds()->root()))) + " (" +
                    std::string(sp::ShardFileTypeName(st.shard_file_type));
  const std::string codec(sp::CompressionName(st.compression));
  if (!codec.empty()) out += ", " + codec;
  constexpr std::size_t kShown = 8;
  const auto& attrs = st.saved_data_description;
  for (std::size_t i = 0; i < attrs.size() && i < kShown; ++i) out += (i ? ", " : "; ") + attrs[i].name;
  if (attrs.size() > kShown) out += ", +" + std::to_string(attrs.size() - kShown) + " more";
  out += "):";
  bool any = false;
  for (const auto& [split, sli] : info.splits) {
    out += std::string(any ? "," : "") + " " + std::string(sp::SplitName(split)) + " " +
           std::to_string(sli.number_of_examples) + (sli.number_of_examples == 1 ? " example" : " examples") +
           " in " + std::to_string(sli.number_of_shards) + (sli.number_of_shards == 1 ? " shard" : " shards");
    any = true;
  }
  if (!any) out += " no examples";
  return out + ">";
}

// DatasetFiller and the module function beside it.
void BindFiller(py::module_& m) {
  m.def(
      "slurm_job_id",
      []() -> std::optional<std::string> {
        std::string id = sp::SlurmJobId();
        if (id.empty()) return std::nullopt;
        return id;
      },
      "The job id a SLURM task keeps across requeues (slurm-<array job>-<task>, or slurm-<job>), or None "
      "outside SLURM: `ds.filler(job_id=sedpack_hpc.slurm_job_id() or \"run-1\")` makes a requeued task "
      "resume its own shards, as `sedpack generate --append` does under SLURM.");
  py::class_<PyFiller>(m, "DatasetFiller", R"doc(Writes examples into a dataset: what `Dataset.filler()` returns.

Use it as a context manager (`with ds.filler() as f: f.write_example(...)`).
Shards are opened, compressed and written by background threads as examples
arrive. Leaving the block normally finishes the filler: the last shards are
closed and the shard lists and dataset_info.json are written (unless the
filler was made with auto_update_dataset=False, see get_updated_infos).
Leaving it by an exception publishes nothing (a resumable filler keeps its
journaled shards for the next run of its job).)doc")
      .def("__enter__", &PyFiller::Enter, py::return_value_policy::reference_internal,
           "Start writing (threads are started, a resumable job's journal is checked); returns the filler.")
      .def("__exit__", &PyFiller::Exit, py::arg("exc_type"), py::arg("exc_value"), py::arg("traceback"),
           "Finish (no exception: everything written is published) or drop what was written (an exception). "
           "Never suppresses the exception.")
      .def(
          "write_example",
          [](PyFiller& f, const py::dict& values, const std::string& split, Hinted<hint::JsonDict> custom_metadata) {
            f.WriteExample(values, split, custom_metadata);
          },
          py::arg("values"), py::arg("split"), py::arg("custom_metadata") = py::none(),
          R"doc(Write one example.

Args:
    values: {attribute name: value} for every attribute of the dataset's
        saved_data_description and nothing else; numpy arrays of the
        attribute's dtype and exact shape (or anything numpy converts to it
        without changing a value), int, str or bytes for those dtypes.
    split: "train", "test" or "holdout".
    custom_metadata: a JSON-able dict recorded with the shard. Examples with
        other custom_metadata go to another shard, so shards can be selected
        by it when reading (shard_filter, custom_metadata_type_limit).

Raises:
    ValueError: a value that does not fit its attribute (the attribute is
        named), a missing or unknown attribute, an unknown split.
    RuntimeError: the filler is not in a `with` block.)doc")
      .def_property_readonly("examples_written", &PyFiller::examples_written,
                             "Examples written by this filler so far (a resumed job: by this run).")
      .def_property_readonly("resumed_examples", &PyFiller::resumed_examples,
                             "Examples of each split an earlier run of this job finished ({split: n}).")
      .def_property_readonly("resumed_shards", &PyFiller::resumed_shards,
                             "Shards an earlier run of this job finished and this run kept (0 without a job_id).")
      .def_property_readonly("job_id", &PyFiller::job_id, "The job_id of a resumable filler, '' otherwise.")
      .def("get_updated_infos", &PyFiller::updated_infos,
           R"doc(The shard lists this filler wrote, once its block is left.

A filler made with auto_update_dataset=False does not publish them; a
coordinator passes the fillers' lists to Dataset.write_config(updated_infos)
to commit them all at once (this is how write_multiprocessing works).
ShardListInfo pickles, so the lists can come from other processes.)doc")
      .def("__repr__", [](const PyFiller& f) {
        std::string out = "<DatasetFiller of " + std::string(py::repr(py::str(f.root())));
        if (!f.job_id().empty()) out += ", job " + std::string(py::repr(py::str(f.job_id())));
        out += f.open() ? ": " + std::to_string(f.examples_written()) + " examples written>" : ": not writing>";
        return out;
      });

}

using DatasetClass = py::class_<PyDataset>;

void DefineOpening(DatasetClass& cls) {
  cls
      .def(py::init([](const PyDataset& other) { return PyDataset(other); }), py::arg("path"),
           "Another handle on the dataset `path` (a Dataset) has open; nothing is read again.")
      .def(py::init([](Hinted<hint::Path> path) { return PyDataset::Open(path); }), py::arg("path"),
           R"doc(Open the dataset at `path`.

Args:
    path: the dataset's directory (the one holding dataset_info.json).

Raises:
    FileNotFoundError: there is no dataset_info.json in `path`.
    ValueError: dataset_info.json is invalid, or written by a newer format
        version than this library reads.)doc")
      .def_static(
          "create",
          [](Hinted<hint::Path> path, Hinted<hint::MetadataLike> metadata,
             Hinted<hint::StructureLike> dataset_structure, bool exist_ok) {
            return PyDataset::Create(path, metadata, dataset_structure, exist_ok);
          },
          py::arg("path"), py::arg("metadata") = py::none(), py::arg("dataset_structure") = py::none(),
          py::kw_only(), py::arg("exist_ok") = false,
          R"doc(Create an empty dataset, to be filled with `filler()` (or `write_multiprocessing`).

Args:
    path: the directory to create it in (made if missing).
    metadata: a Metadata, a dict of its fields, or any object with them (the
        reference's pydantic model too); None: the defaults.
    dataset_structure: how examples are stored (DatasetStructure, dict or
        object as for metadata), with at least one attribute.
    exist_ok: open a dataset already at `path` instead of failing, if its
        structure is the one given (the metadata is not compared).

Returns:
    The new (or, with exist_ok, existing) Dataset.

Raises:
    DatasetExistsError: a dataset exists at `path` (without exist_ok).
    ValueError: an invalid field (named), or with exist_ok an existing
        dataset of another structure (the first field that differs).)doc")
      .def_property_readonly(
          "path", [](const PyDataset& d) { return PyPath(d.ds()->root()); },
          "The dataset's root directory (a pathlib.Path).")
      .def_property_readonly(
          "dataset_info", [](const PyDataset& d) { return d.ds()->info(); },
          "Everything dataset_info.json holds (metadata, dataset_structure, splits), as a copy.")
      .def_property_readonly(
          "metadata", [](const PyDataset& d) { return d.ds()->info().metadata; },
          "The dataset's Metadata (a copy).")
      .def_property_readonly(
          "dataset_structure", [](const PyDataset& d) { return d.ds()->info().dataset_structure; },
          "The dataset's DatasetStructure: its attributes and how shards are stored (a copy).")
      .def("current_metadata_checksums", &PyDataset::MetadataChecksums,
           R"doc(The hash checksums of dataset_info.json as it is now, one per hash_checksum_algorithms entry.

Keep them to check later that nothing changed: `check(hash_checksums_values=...)`.)doc")
      .def(
          "check",
          [](const PyDataset& d, bool, Hinted<hint::Strings> values) { d.CheckIntegrity(values.obj); },
          py::arg("show_progressbar") = true, py::arg("hash_checksums_values") = py::tuple(),
          R"doc(Check the whole dataset: every shard and shard list against its recorded hash checksums,
and the recorded counts.

Args:
    show_progressbar: accepted for the reference's signature; nothing is shown.
    hash_checksums_values: the expected checksums of dataset_info.json (from
        current_metadata_checksums()); empty: not compared.

Raises:
    ValueError: the dataset is inconsistent; the message lists every problem
        found, each file by its full path.)doc");
}

void DefineChecksAndFiller(DatasetClass& cls) {
  cls
      .def(
          "filler",
          [](const PyDataset& d, int concurrency, const std::string& relative_path_from_split,
             bool auto_update_dataset, std::optional<std::string> job_id, bool restart,
             Hinted<hint::JsonDict> job_parameters, bool skip_kept) {
            sp::FillerOptions o;
            o.concurrency = concurrency;
            o.relative_path_from_split = relative_path_from_split;
            o.auto_update_dataset = auto_update_dataset;
            std::optional<FillerResume> resume;
            if (job_id) {
              if (job_id->empty()) throw py::value_error("filler: job_id must not be empty");
              if (relative_path_from_split != "." || !auto_update_dataset) {
                throw py::value_error("filler: a resumable job (job_id) writes its own folders and commits itself: "
                                      "relative_path_from_split and auto_update_dataset do not apply");
              }
              resume = FillerResume{*job_id, JobParameters("python filler", 1, job_parameters), restart, skip_kept};
            } else if (restart || skip_kept || !job_parameters.obj.is_none()) {
              throw py::value_error("filler: restart, job_parameters and skip_kept need a job_id");
            }
            return std::make_unique<PyFiller>(d.ds(), std::move(o), std::move(resume));
          },
          py::arg("concurrency") = 0, py::arg("relative_path_from_split") = ".",
          py::arg("auto_update_dataset") = true, py::kw_only(), py::arg("job_id") = py::none(),
          py::arg("restart") = false, py::arg("job_parameters") = py::none(), py::arg("skip_kept") = false,
          R"doc(A DatasetFiller, the context manager that writes examples: `with ds.filler() as f:`.

Args:
    concurrency: threads compressing and writing shards (0: every hardware thread).
    relative_path_from_split: new shards go to `<split>/<this>/`; no "..".
    auto_update_dataset: publish the shard lists and dataset_info.json when
        the block is left; False leaves that to write_config() with the
        filler's get_updated_infos() (several writers, one commit).
    job_id: make the filler resumable: shards are journaled, and a rerun of
        the same job keeps those an interrupted run finished.
    restart: throw away an earlier run of the job instead of resuming it.
    job_parameters: a dict identifying the job's output (values as str());
        a journal recorded with other ones is refused.
    skip_kept: the script skips the examples an earlier run kept itself
        (resumed_examples); otherwise that many first write_example calls of
        each split are ignored.

Raises:
    ValueError: restart, job_parameters or skip_kept without a job_id, or a
        job_id with relative_path_from_split / auto_update_dataset.)doc")
      .def(
          "as_numpy_iterator",
          [](PyDataset& d, const std::string& split, Hinted<hint::ProcessRecord> process_record,
             std::optional<std::size_t> shards, std::optional<std::size_t> custom_metadata_type_limit,
             Hinted<hint::ShardFilter> shard_filter, bool repeat, std::size_t shuffle, std::optional<std::uint64_t> seed,
             int prefetch_shards, Hinted<hint::VerifyHashes> verify_hashes) {
            return d.Iterate(split, std::move(process_record.obj), shards, custom_metadata_type_limit,
                             std::move(shard_filter.obj), repeat, shuffle, seed, prefetch_shards, verify_hashes.obj, 0);
          },
          py::kw_only(), py::arg("split"), py::arg("process_record") = py::none(), py::arg("shards") = py::none(),
          py::arg("custom_metadata_type_limit") = py::none(), py::arg("shard_filter") = py::none(),
          py::arg("repeat") = true, py::arg("shuffle") = 1000, py::arg("seed") = py::none(),
          py::arg("prefetch_shards") = 2, py::arg("verify_hashes") = py::bool_(true),
          R"doc(Iterate over the examples of a split, one dict of numpy values per example (no batching).

Shards are read, checked and decoded ahead on threads, without the GIL.

Args:
    split: "train", "test" or "holdout".
    process_record: a function applied to each example; its results are yielded.
    shards: read only the first `shards` shards (None or 0: all).
    custom_metadata_type_limit: read at most this many shards of each
        distinct shard custom_metadata (None or 0: no limit).
    shard_filter: a function of a ShardInfo; only shards it returns True for are read.
    repeat: start over at the end, without end.
    shuffle: the size of the example shuffle buffer; shards are read in a
        random order too. 0: the recorded order, deterministic.
    seed: the shuffle's seed (None: a fresh one, readable as `iterator.seed`).
    prefetch_shards: shards read and decoded ahead.
    verify_hashes: True checks each shard (the checks sidecar's fast
        checksum when fresh, else the recorded hashes), "strict" always the
        recorded hashes, False nothing.

Returns:
    A NumpyIterator over dicts {attribute name: value}: numpy arrays of the
    stored dtype and shape (read-only views of the decoded shard), int, str
    or bytes (or what process_record returns).)doc");
}

void DefineReading(DatasetClass& cls) {
  cls
      .def(
          "as_numpy_iterator_batched",
          [](PyDataset& d, const std::string& split, std::size_t batch_size, Hinted<hint::ProcessRecord> process_batch,
             std::optional<std::size_t> shards, std::optional<std::size_t> custom_metadata_type_limit,
             Hinted<hint::ShardFilter> shard_filter, bool repeat, std::size_t shuffle, std::optional<std::uint64_t> seed,
             int prefetch_shards, Hinted<hint::VerifyHashes> verify_hashes) {
            if (batch_size == 0) throw py::value_error("batch_size must be positive");
            return d.Iterate(split, std::move(process_batch.obj), shards, custom_metadata_type_limit,
                             std::move(shard_filter.obj), repeat, shuffle, seed, prefetch_shards, verify_hashes.obj,
                             batch_size);
          },
          py::kw_only(), py::arg("split"), py::arg("batch_size") = 1, py::arg("process_batch") = py::none(),
          py::arg("shards") = py::none(), py::arg("custom_metadata_type_limit") = py::none(),
          py::arg("shard_filter") = py::none(), py::arg("repeat") = true, py::arg("shuffle") = 1000,
          py::arg("seed") = py::none(), py::arg("prefetch_shards") = 2, py::arg("verify_hashes") = py::bool_(true),
          R"doc(Iterate over a split in batches of `batch_size` examples (the last one may be shorter).

The arguments are those of as_numpy_iterator; `process_batch` is applied to
each batch.

Returns:
    A NumpyIterator over dicts {attribute name: batch}: numeric attributes
    stacked along a new first axis (one copy per batch), int, str and bytes
    attributes as lists.

Raises:
    ValueError: batch_size is 0.)doc")
      .def("as_numpy_iterator_elastic", &PyDataset::Elastic, py::kw_only(), py::arg("split"), py::arg("seed") = 0,
           py::arg("shards_per_block") = 4, py::arg("rank") = 0, py::arg("num_readers") = 1,
           py::arg("repeat") = false, py::arg("epoch") = 0, py::arg("prefetch_shards") = 2,
           py::arg("process_record") = py::none(), py::arg("group_size") = 1, py::arg("split_unit") = 1,
           py::arg("equal_counts") = py::none(), py::arg("shuffle") = true, py::arg("verify_hashes") = true,
           py::arg("state") = py::none(),
           R"doc(Iterate over a split in the elastic order: a seeded shuffle of blocks of shards,
split between readers, that can be stopped and resumed exactly.

Args:
    split: "train", "test" or "holdout".
    seed, epoch: the order of an epoch is a function of both.
    shards_per_block: shards shuffled as one unit (more: fewer open shards).
    rank, num_readers: this reader's part of the epoch.
    repeat: go on with the next epoch at the end.
    prefetch_shards: shards read and decoded ahead.
    process_record: a function applied to each example.
    group_size, split_unit, equal_counts: how the epoch is cut between
        readers (equal_counts: None, "pad" or "drop").
    shuffle: False reads the sample index order.
    verify_hashes: as in as_numpy_iterator.
    state: a state_dict() to resume from (of any layout, see merge_elastic_states).

Returns:
    An ElasticIterator (state_dict(), load_state_dict(), next_batch()).)doc")
      .def("get", &PyDataset::Get, py::arg("split"), py::arg("index"),
           R"doc(The example number `index` of `split` (0-based, in the recorded order), as a dict.

The first call builds or opens the sample index; one shard is read per call
(checked), with a cache of recently read shards.

Raises:
    IndexError or ValueError: `index` is out of range.)doc");
}

void DefineShardsAndConfig(DatasetClass& cls) {
  cls
      .def("_shard_infos", &PyDataset::Shards, py::arg("split"),
           "The ShardInfo of every shard of `split` (every split for None), each list checked.")
      .def("write_config", &PyDataset::WriteConfig, py::arg("updated_infos") = py::none(),
           R"doc(Merge shard lists written by fillers made with auto_update_dataset=False and
rewrite dataset_info.json.

Args:
    updated_infos: the fillers' get_updated_infos(), concatenated (None: none;
        dataset_info.json is written again as it is).

Returns:
    The FileInfo of the new dataset_info.json.)doc")
      .def(py::pickle([](const PyDataset& d) { return py::make_tuple(PyPath(d.ds()->root())); },
                      [](const py::tuple& t) { return PyDataset::Open(t[0]); }))
      .def(
          "num_examples",
          [](PyDataset& d, const std::string& split) {
            const auto* sli = d.ds()->info().FindSplit(ToSplit(split));
            return sli ? sli->number_of_examples : 0;
          },
          py::arg("split"), "The number of examples dataset_info.json records for `split` (0 if it has none).")
      .def("__repr__", &DatasetRepr);
}

}  // namespace

void BindDataset(py::module_& m) {
  BindFiller(m);
  DatasetClass cls(m, "Dataset", R"doc(A sedpack dataset on disk: its metadata, and reading and writing it.

`Dataset(path)` opens an existing dataset (its dataset_info.json);
`Dataset.create(path, metadata, dataset_structure)` makes a new one. Examples
are written with `filler()` and read with `as_numpy_iterator()` (the
reference's order), `as_numpy_iterator_batched()`, `as_numpy_iterator_elastic()`
(resumable) or `get()` (by number). Every shard and shard list read is checked
against the hash its parent records. A Dataset pickles (by path).)doc");
  DefineOpening(cls);
  DefineChecksAndFiller(cls);
  DefineReading(cls);
  DefineShardsAndConfig(cls);
}

}  // namespace sedpack_python
