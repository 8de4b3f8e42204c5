// Wall-clock sampling profiler, LD_PRELOAD'ed (a tool for the device, not part of pqgpu).
// Every PROF_US microseconds it sends SIGPROF to every thread of the process; the handler
// records the thread id, the interrupted PC and a frame-pointer walk read by process_vm_readv
// (which fails instead of faulting on a bad pointer). At exit: PROF_OUT.bin, .maps, .threads.
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define DEPTH 12
#define MAXS (1 << 21)
#define SCAN 24
typedef struct { uint64_t tid, n, ns, pc[DEPTH], stk[SCAN]; } sample;
static sample *buf;
static atomic_ulong idx;
static volatile int stop;
static pid_t pid, sampler_tid;
static int us = 2000;
#define MAXT 8192
static int tids[MAXT]; static char comms[MAXT][20]; static int ntids;

static int rd(uint64_t addr, uint64_t *out) {
  struct iovec l = {out, 8}, r = {(void *)addr, 8};
  return syscall(SYS_process_vm_readv, pid, &l, 1, &r, 1, 0) == 8;
}

static void handler(int sig, siginfo_t *si, void *uc_) {
  (void)sig; (void)si;
  ucontext_t *uc = uc_;
  unsigned long i = atomic_fetch_add(&idx, 1);
  if (i >= MAXS) return;
  sample *s = &buf[i];
  s->tid = syscall(SYS_gettid);
  struct timespec now; clock_gettime(CLOCK_MONOTONIC, &now); s->ns = now.tv_sec * 1000000000ull + now.tv_nsec;
  s->pc[0] = uc->uc_mcontext.gregs[REG_RIP];
  uint64_t fp = uc->uc_mcontext.gregs[REG_RBP], sp = uc->uc_mcontext.gregs[REG_RSP];
  int n = 1;
  while (n < DEPTH && fp >= sp && fp < sp + (1 << 20) && (fp & 7) == 0) {
    uint64_t next, ret;
    if (!rd(fp, &next) || !rd(fp + 8, &ret)) break;
    s->pc[n++] = ret;
    if (next <= fp) break;
    fp = next;
  }
  s->n = n;
  struct iovec l = {s->stk, sizeof s->stk}, r = {(void *)sp, sizeof s->stk};
  if (syscall(SYS_process_vm_readv, pid, &l, 1, &r, 1, 0) != (long)sizeof s->stk) memset(s->stk, 0, sizeof s->stk);
}

static void note_threads(DIR *d) {
  struct dirent *e;
  rewinddir(d);
  while ((e = readdir(d))) {
    int t = atoi(e->d_name);
    if (t <= 0 || t == sampler_tid) continue;
    syscall(SYS_tgkill, pid, t, SIGPROF);
    int known = 0;
    for (int k = 0; k < ntids; k++) if (tids[k] == t) { known = 1; break; }
    if (!known && ntids < MAXT) {
      char p[64]; snprintf(p, sizeof p, "/proc/self/task/%d/comm", t);
      FILE *f = fopen(p, "r");
      if (f) { if (!fgets(comms[ntids], 20, f)) comms[ntids][0] = 0; fclose(f); }
      comms[ntids][strcspn(comms[ntids], "\n")] = 0;
      tids[ntids++] = t;
    }
  }
}

static void *sampler(void *a) {
  (void)a;
  sampler_tid = syscall(SYS_gettid);
  DIR *d = opendir("/proc/self/task");
  struct timespec ts = {0, us * 1000L};
  while (!stop) { nanosleep(&ts, 0); if (d) note_threads(d); }
  return 0;
}

__attribute__((constructor)) static void start(void) {
  const char *o = getenv("PROF_OUT");
  if (!o) return;
  if (getenv("PROF_US")) us = atoi(getenv("PROF_US"));
  pid = getpid();
  buf = calloc(MAXS, sizeof(sample));
  struct sigaction sa; memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = handler; sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigaction(SIGPROF, &sa, 0);
  pthread_t t; pthread_create(&t, 0, sampler, 0); pthread_detach(t);
}

__attribute__((destructor)) static void finish(void) {
  const char *o = getenv("PROF_OUT");
  if (!o || !buf) return;
  stop = 1;
  unsigned long n = atomic_load(&idx); if (n > MAXS) n = MAXS;
  char p[512];
  snprintf(p, sizeof p, "%s.bin", o);
  FILE *f = fopen(p, "w"); if (f) { fwrite(buf, sizeof(sample), n, f); fclose(f); }
  snprintf(p, sizeof p, "%s.maps", o);
  FILE *m = fopen("/proc/self/maps", "r"); f = fopen(p, "w");
  if (m && f) { char l[1024]; while (fgets(l, sizeof l, m)) fputs(l, f); }
  if (m) fclose(m); if (f) fclose(f);
  snprintf(p, sizeof p, "%s.threads", o);
  f = fopen(p, "w");
  if (f) { for (int k = 0; k < ntids; k++) fprintf(f, "%d %s\n", tids[k], comms[k]); fclose(f); }
}
