// SPDX-License-Identifier: Apache-2.0
#include "sedpack/shard/shard.h"

#include <new>
#include <set>
#include <string>
#include <utility>

#include "shard/shard_internal.h"

namespace sedpack {
namespace shard_internal {
namespace {

// Decode one code point of well-formed-or-not UTF-8 at `s[*i]`; advance `*i`.
// Return false on any ill-formed sequence (overlong, surrogate, > U+10FFFF, truncated).
bool DecodeUtf8(std::string_view s, std::size_t* i, std::uint32_t* cp) {
  const auto b0 = static_cast<unsigned char>(s[*i]);
  if (b0 < 0x80) {
    *cp = b0;
    ++*i;
    return true;
  }
  int len;
  std::uint32_t min;
  if ((b0 & 0xe0) == 0xc0) {
    len = 2;
    min = 0x80;
    *cp = b0 & 0x1f;
  } else if ((b0 & 0xf0) == 0xe0) {
    len = 3;
    min = 0x800;
    *cp = b0 & 0x0f;
  } else if ((b0 & 0xf8) == 0xf0) {
    len = 4;
    min = 0x10000;
    *cp = b0 & 0x07;
  } else {
    return false;
  }
  if (s.size() - *i < static_cast<std::size_t>(len)) return false;
  for (int k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[*i + k]);
    if ((b & 0xc0) != 0x80) return false;
    *cp = (*cp << 6) | (b & 0x3f);
  }
  if (*cp < min || *cp > 0x10ffff || (*cp >= 0xd800 && *cp <= 0xdfff)) return false;
  *i += len;
  return true;
}

}  // namespace

bool IsValidUtf8(std::string_view text) {
  std::size_t i = 0;
  std::uint32_t cp;
  while (i < text.size()) {
    if (!DecodeUtf8(text, &i, &cp)) return false;
  }
  return true;
}

std::size_t Utf8CodePointCount(std::string_view text) {
  std::size_t n = 0;
  for (char c : text) {
    // Every code point has exactly one byte that is not a continuation byte.
    if ((static_cast<unsigned char>(c) & 0xc0) != 0x80) ++n;
  }
  return n;
}

void AppendUtf32LeFromUtf8(std::string_view text, std::vector<std::byte>* out) {
  std::size_t i = 0;
  std::uint32_t cp;
  while (i < text.size()) {
    if (!DecodeUtf8(text, &i, &cp)) {
      cp = 0xfffd;  // Unreachable for validated input; keeps the output well-formed.
      ++i;
    }
    AppendLe(cp, 4, out);
  }
}

void AppendUtf8(std::uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

Status ValidateSchema(const std::vector<AttributeSpec>& schema) {
  if (schema.empty()) {
    // npz derives the example count from the first attribute; an fb example
    // without attributes would carry no data either.
    return Status::InvalidArgument("a shard schema needs at least one attribute");
  }
  std::set<std::string_view> names;
  for (const AttributeSpec& spec : schema) {
    if (spec.name.empty()) return Status::InvalidArgument("attribute names must not be empty");
    if (!names.insert(spec.name).second) {
      // npz stores one member per name, so duplicates would overwrite each other.
      return Status::InvalidArgument("duplicate attribute name \"", spec.name, "\"");
    }
    if (spec.dtype == DType::kInt && !spec.shape.empty()) {
      return Status::InvalidArgument("attribute \"", spec.name,
                                     "\" has dtype int, which takes shape (), got ",
                                     ShapeToString(spec.shape));
    }
    if (spec.dtype == DType::kStr && !spec.shape.empty()) {
      return Status::InvalidArgument("attribute \"", spec.name,
                                     "\" has dtype str, which takes shape (), got ",
                                     ShapeToString(spec.shape));
    }
    if (!spec.IsVariableSize()) {
      SEDPACK_RETURN_NOT_OK(
          spec.FixedByteSize().status().WithPrefix("attribute \"" + spec.name + "\": "));
    }
  }
  return Status::OK();
}

Status ValidateExample(const std::vector<AttributeSpec>& schema,
                       std::span<const ValueView> values) {
  if (values.size() != schema.size()) {
    return Status::InvalidArgument("an example needs ", schema.size(), " attribute values, got ",
                                   values.size());
  }
  for (std::size_t j = 0; j < schema.size(); ++j) {
    SEDPACK_RETURN_NOT_OK(ValidateValue(schema[j], values[j]));
    if (schema[j].dtype == DType::kStr && !IsValidUtf8(values[j].AsStringView())) {
      // The reference decodes str strictly; invalid UTF-8 would make the shard unreadable.
      return Status::InvalidArgument("attribute \"", schema[j].name, "\" is not valid UTF-8 text");
    }
  }
  return Status::OK();
}

}  // namespace shard_internal

namespace {

Status CheckTypeAndCompression(ShardFileType type, Compression compression) {
  if (!CompressionAllowed(type, compression)) {
    return Status::InvalidArgument("compression \"", CompressionName(compression),
                                   "\" is not allowed for ", ShardFileTypeName(type), " shards");
  }
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<ShardWriter>> MakeShardWriter(ShardFileType type, Compression compression,
                                                     std::vector<AttributeSpec> schema,
                                                     const CodecOptions& codec) {
  SEDPACK_RETURN_NOT_OK(CheckTypeAndCompression(type, compression));
  SEDPACK_RETURN_NOT_OK(shard_internal::ValidateSchema(schema));
  SEDPACK_RETURN_NOT_OK(ValidateCodecLevel(compression, codec.level));
  if (codec.threads < 1) {
    return Status::InvalidArgument("codec threads must be at least 1, got ", codec.threads);
  }
  switch (type) {
    case ShardFileType::kFb:
      return shard_internal::MakeFbShardWriter(compression, std::move(schema), codec);
    case ShardFileType::kNpz:
      return shard_internal::MakeNpzShardWriter(compression, std::move(schema), codec.level);
    case ShardFileType::kTfrec:
      return shard_internal::MakeTfrecShardWriter(compression, std::move(schema), codec.level);
  }
  return Status::InvalidArgument("unknown shard file type ", static_cast<int>(type));
}

Result<std::unique_ptr<DecodedShard>> DecodeShard(ShardFileType type, Compression compression,
                                                  const std::vector<AttributeSpec>& schema,
                                                  std::vector<std::byte> file_bytes,
                                                  const ShardReadLimits& limits) {
  return shard_internal::DecodeShardBuffer(type, compression, schema,
                                           codecs_internal::ByteBuffer(std::move(file_bytes)),
                                           limits);
}

namespace shard_internal {

Result<std::unique_ptr<DecodedShard>> DecodeShardBuffer(ShardFileType type, Compression compression,
                                                        const std::vector<AttributeSpec>& schema,
                                                        codecs_internal::ByteBuffer file_bytes,
                                                        const ShardReadLimits& limits) {
  SEDPACK_RETURN_NOT_OK(CheckTypeAndCompression(type, compression));
  SEDPACK_RETURN_NOT_OK(ValidateSchema(schema));
  if (type == ShardFileType::kFb) {
    return DecodeFbShard(compression, schema, std::move(file_bytes), limits);
  }
  if (type == ShardFileType::kTfrec) {
    return DecodeTfrecShard(compression, schema, file_bytes.span(), limits);
  }
  std::vector<std::byte> bytes;
  try {
    bytes = std::move(file_bytes).ToVector();
  } catch (const std::bad_alloc&) {
    return Status::ResourceExhausted("out of memory while decoding an npz shard");
  }
  return DecodeNpzShard(schema, std::move(bytes), limits);
}

Status FinishShardToBuffer(ShardWriter& writer, codecs_internal::ByteBuffer* out) {
  if (auto* w = dynamic_cast<BufferFinishable*>(&writer)) return w->FinishToBuffer(out);
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::byte> bytes, writer.Finish());
  *out = codecs_internal::ByteBuffer(std::move(bytes));
  return Status::OK();
}

Status FinishShardToSink(ShardWriter& writer, const codecs_internal::ByteSink& sink, int threads) {
  if (auto* w = dynamic_cast<BufferFinishable*>(&writer)) return w->FinishToSink(sink, threads);
  SEDPACK_ASSIGN_OR_RETURN(std::vector<std::byte> bytes, writer.Finish());
  return sink(bytes);
}

ShardWriteChecks TakeShardWriteChecks(ShardWriter& writer) {
  if (auto* w = dynamic_cast<BufferFinishable*>(&writer)) return w->TakeWriteChecks();
  return {};
}

bool ShardFinishStreams(const ShardWriter& writer) {
  const auto* w = dynamic_cast<const BufferFinishable*>(&writer);
  return w != nullptr && w->StreamsOnFinish();
}

}  // namespace shard_internal

}  // namespace sedpack
