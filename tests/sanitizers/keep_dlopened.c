/* SPDX-License-Identifier: Apache-2.0
 * Preloaded (LD_PRELOAD) into the MPI test runs of the ASan+UBSan tree only,
 * never into anything a user runs: dlclose() does nothing, so the Open MPI
 * components that MPI_Init loads stay mapped until the process exits.
 *
 * Why: Open MPI 4.1 unloads its MCA components in MPI_Finalize, and what they
 * leave allocated is then reported by LeakSanitizer at exit with an
 * "<unknown module>" frame that no suppression can name. With the components
 * still mapped, the first frame of such a stack names its library
 * (.../openmpi/.../mca_*.so), which sanitizers/lsan.supp suppresses, so ASan can
 * keep its fast frame-pointer unwinder; the slow one it needed otherwise made
 * every MPI test run two to five times longer.
 *
 * Built without sanitizer flags: it is also loaded into mpiexec itself. */
int dlclose(void* handle) {
  (void)handle;
  return 0;
}
