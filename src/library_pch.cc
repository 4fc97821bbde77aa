// SPDX-License-Identifier: Apache-2.0
// The one source of sedpack_library_pch, the target that owns the library's
// precompiled header (library_pch.h); it defines nothing.
