/* tracekit's uprobe test (tests/record_filters.rs): `probe_target N [MS]` calls
   tk_probe_target and passes a USDT probe site N times, then (with MS) spends MS ms in
   tk_slow. */
#include <stdlib.h>
#include <unistd.h>
/* A USDT probe site without <sys/sdt.h>: the stapsdt ELF note (type 3, owner "stapsdt";
   pc, base, semaphore, then provider, name and argument strings) and the .stapsdt.base
   section it is relative to. */
__attribute__((weak)) char _sdt_base __attribute__((section(".stapsdt.base"))) = 0;
#define TK_SDT(provider, name)                                                  \
  __asm__ __volatile__("990: nop\n"                                           \
                       ".pushsection .note.stapsdt,\"?\",\"note\"\n"           \
                       ".balign 4\n"                                          \
                       ".4byte 992f-991f, 994f-993f, 3\n"                      \
                       "991: .asciz \"stapsdt\"\n"                            \
                       "992: .balign 4\n"                                     \
                       "993: .8byte 990b\n"                                    \
                       ".8byte _sdt_base\n"                                    \
                       ".8byte 0\n"                                            \
                       ".asciz \"" #provider "\"\n"                            \
                       ".asciz \"" #name "\"\n"                                \
                       ".asciz \"\"\n"                                         \
                       "994: .balign 4\n"                                     \
                       ".popsection\n")
__attribute__((noinline)) int tk_probe_target(int i) {
  __asm__ __volatile__("" ::: "memory");
  return i * 2;
}
__attribute__((noinline)) void tk_slow(int ms) {
  usleep(ms * 1000);
  __asm__ __volatile__("" ::: "memory");
}
int main(int argc, char **argv) {
  int n = atoi(argv[1]), s = 0;
  for (int i = 0; i < n; i++) {
    s += tk_probe_target(i);
    TK_SDT(tkprov, tick);
  }
  if (argc > 2)
    tk_slow(atoi(argv[2]));
  return s == -1;
}
