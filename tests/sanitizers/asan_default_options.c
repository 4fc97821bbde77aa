/* SPDX-License-Identifier: Apache-2.0
 * Linked into every executable of the ASan+UBSan and fuzz trees (the top
 * CMakeLists.txt), never into anything installed: the ASan runtime reads these
 * defaults before ASAN_OPTIONS, which overrides them flag by flag. So a test
 * run by hand (ctest in build-asan, a rank under mpirun) runs as the hardening
 * stage runs it, without that script's environment.
 *
 * intercept_tls_get_addr=0: clang 14's runtime (LLVM up to 16) takes a dynamic
 * TLS block that starts 16 bytes into a page for a pre-2.25 glibc block with a
 * header, reads the two words before it as an address and a size, and
 * LeakSanitizer's tracer then dies scanning that range at exit ("Tracer caught
 * signal 11", after every case passed). With glibc 2.25+ any malloc'd block can
 * start there. With the interceptor off the tracer scans fewer roots, so it can
 * only report more leaks, never hide one. */
__attribute__((visibility("default"), used)) const char* __asan_default_options(void) {
  return "intercept_tls_get_addr=0";
}
