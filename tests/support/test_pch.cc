// SPDX-License-Identifier: Apache-2.0
// The one source of sedpack_test_pch, the target that owns the tests'
// precompiled header (test_pch.h); it defines nothing.
