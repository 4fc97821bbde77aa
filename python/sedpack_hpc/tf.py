# SPDX-License-Identifier: Apache-2.0
"""Dataset.as_tfdataset: a tf.data.Dataset over as_numpy_iterator, with the
reference's signature, for Keras and JAX input pipelines. TensorFlow is
imported only when it is called. Not covered by the tests (TensorFlow is not
packaged for the test machines)."""
from __future__ import annotations

import os
from typing import Any, Callable

from . import _sedpack_hpc as _ext


def _spec(tf, attribute):
    dtype = {"int": tf.int64, "str": tf.string, "bytes": tf.string}.get(attribute.dtype)
    return tf.TensorSpec(shape=tuple(attribute.shape), dtype=dtype or tf.as_dtype(attribute.dtype))


def as_tfdataset(self: _ext.Dataset, split: str, *, process_record: Callable[..., Any] | None = None,
                 shards: int | None = None, custom_metadata_type_limit: int | None = None,
                 shard_filter: Callable[[_ext.ShardInfo], bool] | None = None, repeat: bool = True,
                 batch_size: int = 32, prefetch: int = 2, file_parallelism: int | None = os.cpu_count(),
                 parallelism: int | None = os.cpu_count(), shuffle: int = 1000) -> Any:
    """The split as a tf.data.Dataset: as_numpy_iterator(...) (shards read ahead
    on `file_parallelism` threads), then `process_record` mapped, shuffled,
    batched (`batch_size` > 0) and prefetched as the reference does."""
    import tensorflow as tf  # type: ignore[import]  # optional dependency

    signature = {a.name: _spec(tf, a) for a in self.dataset_structure.saved_data_description}

    def examples():
        return self.as_numpy_iterator(split=split, shards=shards, custom_metadata_type_limit=custom_metadata_type_limit,
                                      shard_filter=shard_filter, repeat=repeat, shuffle=shuffle,
                                      prefetch_shards=max(1, file_parallelism or 1))

    ds = tf.data.Dataset.from_generator(examples, output_signature=signature)
    if process_record is not None:
        ds = ds.map(process_record, num_parallel_calls=parallelism)
    if shuffle:
        ds = ds.shuffle(shuffle)
    if batch_size > 0:
        ds = ds.batch(batch_size)
    return ds.prefetch(prefetch)
