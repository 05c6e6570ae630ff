/*
 * The service's host spawner: a small, long-lived process that starts the
 * runtime's host commands (ip, nft, nsenter, mkfs, cp, the namespace holders
 * and each sandbox's launch chain), so that each costs a vfork of this small
 * process instead of a fork of the service's Node heap. A fork blocks the
 * service's main thread while the kernel copies its page tables and until
 * the child has exec'd (and torn the copy down again); with the warm pool
 * refilling, that was the larger part of the service's busy time.
 *
 * Started by the service (src/local/runtime/host-spawner.ts), which owns the
 * protocol (described there); this side only parses it. It runs only what
 * the service asks, with the argv and environment it is given: no shell, and
 * the program is found on this process's own PATH (the service's).
 *
 * Death: it takes the parent-death signal (SIGKILL) from the service and
 * exits unless the service is still its parent once that is set; each child
 * takes the same signal from this process and is killed before its exec
 * unless this process is still its parent. So a kill -9 of the service kills
 * this process, which kills every command it started. A launch's child is
 * the first process of a pid namespace of its own, and bwrap, which it
 * becomes, is that namespace's init: when bwrap dies, the kernel kills every
 * process of the namespace, the sandbox's in bwrap's nested one included.
 * bwrap's --die-with-parent alone left a window: its sandbox-side child (the
 * init of the sandbox's pid namespace) has no parent-death signal from its
 * clone until it has set up the sandbox's root and started the agent, and a
 * kill in that window left it and the agent running under init, holding the
 * sandbox's namespaces, veth, loop device and cgroup.
 *
 * Each child gets pipes for stdout and stderr (and stdin, or /dev/null), and
 * optionally descriptors 3, 4, ... made here: a unix socket listening on a
 * path, or a file opened read-only. The service's ends of the pipes stay
 * open here until it has opened them through /proc/<pid>/fd (`C`).
 *
 * A launch (`L`) is a command that enters a sandbox: its child joins the
 * sandbox's cgroups, sets its limits, enters the namespace holder's mount
 * and network namespaces, drops to the sandbox's host uid and only then
 * execs (bwrap), with the holder's user namespace as one more descriptor
 * (see launch_steps). Doing that here costs a fork; done by sh, nsenter and
 * setpriv it cost three more execs per sandbox start.
 *
 * A holder (`H`) is a sandbox's namespace holder: its child drops to the
 * sandbox's host uid, makes its user, mount and network namespaces, sets the
 * parent-death signal again and checks its parent before the exec (sleep);
 * done by setpriv and unshare(1), it cost two more execs, and setpriv re-armed
 * the signal without checking that its parent was still there.
 *
 * Build: cc -O2 -static (scripts/build-host-spawner.js).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../wire/spawner-frame.h"

#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

#define MAX_CHILDREN 4096
/* Descriptors 3 .. FIRST_FREE_FD-1 are kept busy here, so no descriptor made here clobbers them. */
#define FIRST_FREE_FD 16
#define MAX_EXTRA_FDS (FIRST_FREE_FD - 3)

struct child {
  /* The command's pid until it is reaped, then 0. */
  pid_t pid;
  /* The service's ends of stdout, stderr and stdin (-1: none), held until `C`. */
  int held[3];
  /* A launch's report pipe until it exec'd or failed (-1: none; see settle_start). */
  int report;
  /* Its launch failed (`F` sent): reaped without an `X`. */
  int failed;
  char id[24];
};

static struct child children[MAX_CHILDREN];
static int devnull = -1;
static pid_t self;

static int in_use(const struct child *c) {
  return c->pid > 0 || c->held[0] >= 0 || c->held[1] >= 0 || c->held[2] >= 0 || c->report >= 0;
}

static void close_held(struct child *c) {
  for (int i = 0; i < 3; i++) {
    if (c->held[i] >= 0) close(c->held[i]);
    c->held[i] = -1;
  }
}

/* The child not reaped yet whose id is `id` (`live`), or any slot still holding it. */
static struct child *slot_of(const char *id, int live) {
  for (int i = 0; i < MAX_CHILDREN; i++)
    if ((live ? children[i].pid > 0 : in_use(&children[i])) && strcmp(children[i].id, id) == 0)
      return &children[i];
  return NULL;
}

/* A unix socket listening on `path` (replacing what is there), mode 0600; -1 with errno set. */
static int listen_on(const char *path) {
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof addr.sun_path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  strcpy(addr.sun_path, path);
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return -1;
  if ((unlink(path) != 0 && errno != ENOENT) ||
      bind(s, (struct sockaddr *)&addr, sizeof addr) != 0 || chmod(path, 0600) != 0 ||
      listen(s, 511) != 0) {
    int e = errno;
    close(s);
    errno = e;
    return -1;
  }
  return s;
}

/* The descriptor an extra-fd field asks for: "L<path>" listens there, "R<path>" opens it read-only. */
static int extra_fd(const char *spec) {
  if (spec[0] == 'L') return listen_on(spec + 1);
  if (spec[0] == 'R') return open(spec + 1, O_RDONLY | O_CLOEXEC);
  errno = EINVAL;
  return -1;
}

/*
 * Steps of a start that can fail, named in its `F` event (host-launch.ts
 * describes each to the user). A plain command's failures are named by their
 * errno alone.
 */
enum step {
  STEP_NONE,
  STEP_PARENT,
  STEP_FDS,
  STEP_EXEC,
  STEP_HOLDER,
  STEP_NS_USER,
  STEP_NS_MNT,
  STEP_NS_NET,
  STEP_CGROUP,
  STEP_NOFILE,
  STEP_SETNS_MNT,
  STEP_SETNS_NET,
  STEP_GROUPS,
  STEP_GID,
  STEP_UID,
  STEP_PDEATHSIG,
  STEP_UNSHARE,
  STEP_PROPAGATION,
};
static const char *const step_names[] = {
    [STEP_NONE] = "",           [STEP_PARENT] = "parent",       [STEP_FDS] = "fds",
    [STEP_EXEC] = "exec",       [STEP_HOLDER] = "holder",       [STEP_NS_USER] = "ns-user",
    [STEP_NS_MNT] = "ns-mnt",   [STEP_NS_NET] = "ns-net",       [STEP_CGROUP] = "cgroup",
    [STEP_NOFILE] = "nofile",   [STEP_SETNS_MNT] = "setns-mnt", [STEP_SETNS_NET] = "setns-net",
    [STEP_GROUPS] = "groups",   [STEP_GID] = "gid",             [STEP_UID] = "uid",
    [STEP_PDEATHSIG] = "pdeathsig", [STEP_UNSHARE] = "unshare",
    [STEP_PROPAGATION] = "propagation",
};

/* What a child that failed before its exec tells this process, through a close-on-exec pipe. */
struct failure {
  int step;
  /* Which cgroup.procs file, for STEP_CGROUP. */
  int index;
  int err;
};

/* A launch's steps before its exec (the fields of `L`, see host-launch.ts). */
struct launch {
  pid_t holder;
  /* The sandbox's host uid and gid (root inside its user namespace). */
  uid_t id;
  rlim_t nofile;
  const char *oom_score_adj;
  /* The descriptor number the holder's user namespace gets (bwrap --userns). */
  int userns_fd;
  long ncgroups;
  char **cgroup_procs;
  /* The holder's user, mount and network namespaces, opened here before the fork. */
  int ns[3];
};

static void emit_failure(const char *id, const struct failure *why, int launch) {
  char line[128];
  int n = launch ? snprintf(line, sizeof line, "F %s %d %s %d\n", id, why->err,
                            step_names[why->step], why->index)
                 : snprintf(line, sizeof line, "F %s %d\n", id, why->err);
  emit_line(line, n);
}

static void emit_started(const struct child *c) {
  char line[96];
  emit_line(line, snprintf(line, sizeof line, "S %s %ld %d %d %d\n", c->id, (long)c->pid,
                           c->held[0], c->held[1], c->held[2]));
}

/*
 * A forked child (a launch's or a holder's) has reported (its report pipe is
 * readable, or it was reaped): EOF once it exec'd, `S`; else the step that
 * failed, `F`, and its exit is not reported.
 */
static void settle_start(struct child *c) {
  struct failure why;
  ssize_t got;
  do got = read(c->report, &why, sizeof why);
  while (got < 0 && errno == EINTR);
  close(c->report);
  c->report = -1;
  if (got != (ssize_t)sizeof why) {
    emit_started(c);
    return;
  }
  emit_failure(c->id, &why, 1);
  c->failed = 1;
  close_held(c);
}

/* In a child before its exec: reports the failed step to the parent and exits. */
static void _Noreturn fail_child(int report, int step, int index) {
  struct failure why = {step, index, errno};
  ssize_t w = write(report, &why, sizeof why);
  (void)w;
  _exit(127);
}

/* Writes `text` to an existing file (cgroup.procs, oom_score_adj); -1 with errno set. */
static int write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t n = strlen(text);
  ssize_t w = write(fd, text, n);
  int e = errno;
  close(fd);
  if (w == (ssize_t)n) return 0;
  errno = w < 0 ? e : EIO;
  return -1;
}

/* True while `pid` is a child of this process not reaped yet: its pid is no one else's. */
static int live_child(pid_t pid) {
  for (int i = 0; i < MAX_CHILDREN; i++)
    if (children[i].pid == pid) return pid > 0;
  return 0;
}

/*
 * Opens the holder's namespaces, in this process, while the holder is a child
 * not reaped yet: its /proc entry cannot be another process's, however long
 * the service's request took to come. 0, or the failed step with errno set.
 */
static int open_holder(struct launch *l) {
  static const char *const names[3] = {"user", "mnt", "net"};
  if (!live_child(l->holder)) {
    errno = ESRCH;
    return STEP_HOLDER;
  }
  for (int i = 0; i < 3; i++) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/ns/%s", (long)l->holder, names[i]);
    if ((l->ns[i] = open(path, O_RDONLY | O_CLOEXEC)) < 0) return STEP_NS_USER + i;
  }
  return STEP_NONE;
}

/* Drops a child from host root to host uid and gid `id`, without supplementary groups. */
static void drop_to(uid_t id, int report) {
  if (setgroups(0, NULL) != 0) fail_child(report, STEP_GROUPS, 0);
  if (setresgid(id, id, id) != 0) fail_child(report, STEP_GID, 0);
  if (setresuid(id, id, id) != 0) fail_child(report, STEP_UID, 0);
}

/*
 * The pid of this process's parent as the host sees it, 0 if unknown. A
 * launch's child is the first process of its own pid namespace, where
 * getppid() is 0 (its parent is outside); the host's /proc (the holder's
 * mount namespace has it too) still gives the parent's host pid, or 1 once
 * the parent died.
 */
static pid_t parent_pid(void) {
  pid_t ppid = getppid();
  if (ppid != 0) return ppid;
  char buf[256];
  int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  /* "pid (comm) state ppid ...": the command name may hold spaces and parentheses. */
  char *end = strrchr(buf, ')');
  char state;
  long parent;
  if (end == NULL || sscanf(end + 1, " %c %ld", &state, &parent) != 2) return 0;
  return (pid_t)parent;
}

/*
 * The kernel clears the parent-death signal on a credential change: set it
 * again after the last one, then check this process's parent did not die
 * before it was set (it would then never come).
 */
static void rearm_death(int report) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) fail_child(report, STEP_PDEATHSIG, 0);
  if (parent_pid() != self) {
    errno = ESRCH;
    fail_child(report, STEP_PARENT, 0);
  }
}

/*
 * A launch's child, as root, after its descriptors are in place: what the
 * launch script (sh, nsenter, setpriv) did before. It joins the sandbox's
 * cgroups first, so everything after is charged to the sandbox; enters the
 * holder's mount and network namespaces; then drops to the sandbox's host
 * uid, since bwrap refuses --userns as host root. Exits through fail_child.
 */
static void enter_sandbox(const struct launch *l, int report) {
  char pid[24];
  /* 1 in its own pid namespace: cgroup.procs reads a pid in the writer's namespace. */
  snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
  for (long i = 0; i < l->ncgroups; i++)
    if (write_file(l->cgroup_procs[i], pid) != 0) fail_child(report, STEP_CGROUP, (int)i);
  /* Best effort: lowering it needs CAP_SYS_RESOURCE, which some container hosts withhold. */
  (void)write_file("/proc/self/oom_score_adj", l->oom_score_adj);
  struct rlimit nofile = {l->nofile, l->nofile};
  if (setrlimit(RLIMIT_NOFILE, &nofile) != 0) fail_child(report, STEP_NOFILE, 0);
  if (setns(l->ns[1], CLONE_NEWNS) != 0) fail_child(report, STEP_SETNS_MNT, 0);
  if (setns(l->ns[2], CLONE_NEWNET) != 0) fail_child(report, STEP_SETNS_NET, 0);
  drop_to(l->id, report);
  /* bwrap's --die-with-parent keeps it from there. */
  rearm_death(report);
}

/*
 * A holder's child, as root: drops to the sandbox's host uid (so per-user
 * kernel limits are charged to it) and makes the holder's user, mount and
 * network namespaces, its mounts slaves of the host's: the host's unmount of
 * a deleted volume must reach this namespace's copy, or the volume's loop
 * device outlives its deletion. What setpriv and unshare(1) did before, with
 * the parent check setpriv lacked. Exits through fail_child.
 */
static void become_holder(uid_t id, int report) {
  drop_to(id, report);
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET) != 0) fail_child(report, STEP_UNSHARE, 0);
  if (mount("none", "/", NULL, MS_REC | MS_SLAVE, NULL) != 0)
    fail_child(report, STEP_PROPAGATION, 0);
  rearm_death(report);
}

/*
 * fields: "S", id, stdin ("1" or "0"), nfds, fd spec..., file, argc, argv..., env...
 * or "L", id, stdin, nfds, fd spec..., holder, id base, nofile, oom_score_adj,
 * userns fd, ncgroups, cgroup.procs..., file, argc, argv..., env...
 * or "H", id, stdin, nfds, fd spec..., id base, file, argc, argv..., env...
 */
static void spawn_one(char **f, int nf) {
  const int launching = f[0][0] == 'L';
  const int holding = f[0][0] == 'H';
  /* Its child changes credentials before its exec (forks; its steps are named in `F`). */
  const int forking = launching || holding;
  const char *id = nf > 1 ? f[1] : "?";
  struct failure bad = {STEP_NONE, 0, EINVAL};
  if (nf < 6 || strlen(id) >= sizeof children[0].id) {
    emit_failure(strlen(id) < sizeof children[0].id ? id : "?", &bad, forking);
    return;
  }
  int want_stdin = f[2][0] == '1';
  long nfds = strtol(f[3], NULL, 10);
  if (nfds < 0 || nfds > MAX_EXTRA_FDS || 4 + nfds + 2 > nf) {
    emit_failure(id, &bad, forking);
    return;
  }
  long next = 4 + nfds;
  struct launch l = {.ns = {-1, -1, -1}};
  if (launching) {
    if (next + 6 > nf) {
      emit_failure(id, &bad, forking);
      return;
    }
    l.holder = (pid_t)strtol(f[next], NULL, 10);
    l.id = (uid_t)strtoul(f[next + 1], NULL, 10);
    l.nofile = (rlim_t)strtoul(f[next + 2], NULL, 10);
    l.oom_score_adj = f[next + 3];
    l.userns_fd = (int)strtol(f[next + 4], NULL, 10);
    l.ncgroups = strtol(f[next + 5], NULL, 10);
    l.cgroup_procs = f + next + 6;
    next += 6 + l.ncgroups;
    /* Root inside must not be host root, and the user namespace goes above the extra descriptors. */
    if (l.holder <= 0 || l.id == 0 || l.nofile == 0 || l.userns_fd < 3 + nfds ||
        l.userns_fd >= FIRST_FREE_FD || l.ncgroups < 0 || next + 2 > nf) {
      emit_failure(id, &bad, forking);
      return;
    }
  }
  uid_t holder_id = 0;
  if (holding) {
    holder_id = (uid_t)strtoul(f[next], NULL, 10);
    next += 1;
    /* Root inside must not be host root. */
    if (holder_id == 0 || next + 2 > nf) {
      emit_failure(id, &bad, forking);
      return;
    }
  }
  const char *file = f[next];
  long argc = strtol(f[next + 1], NULL, 10);
  long argv0 = next + 2;
  if (argc < 1 || argv0 + argc > nf) {
    emit_failure(id, &bad, forking);
    return;
  }
  int extra[MAX_EXTRA_FDS];
  for (int i = 0; i < MAX_EXTRA_FDS; i++) extra[i] = -1;
  char **argv = calloc((size_t)argc + 1, sizeof *argv);
  char **envp = calloc((size_t)(nf - argv0 - argc) + 1, sizeof *envp);
  struct child *slot = NULL;
  for (int i = 0; i < MAX_CHILDREN && !slot; i++)
    if (!in_use(&children[i])) slot = &children[i];
  /* [0] read, [1] write: the child gets out[1], err[1] and in[0], and reports on report[1]. */
  int out[2] = {-1, -1}, err[2] = {-1, -1}, in[2] = {-1, -1}, report[2] = {-1, -1};
  if (!argv || !envp || !slot) {
    bad.err = EAGAIN;
    emit_failure(id, &bad, forking);
    goto done;
  }
  for (long i = 0; i < argc; i++) argv[i] = f[argv0 + i];
  for (long i = 0; i < nf - argv0 - argc; i++) envp[i] = f[argv0 + argc + i];
  bad.step = STEP_FDS;
  for (long i = 0; i < nfds; i++) {
    if ((extra[i] = extra_fd(f[4 + i])) < 0) {
      bad.err = errno;
      emit_failure(id, &bad, forking);
      goto done;
    }
  }
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 ||
      (want_stdin && pipe2(in, O_CLOEXEC) != 0) || pipe2(report, O_CLOEXEC) != 0) {
    bad.err = errno;
    emit_failure(id, &bad, forking);
    goto done;
  }
  if (launching && (bad.step = open_holder(&l)) != STEP_NONE) {
    bad.err = errno;
    emit_failure(id, &bad, forking);
    goto done;
  }
  int child_in = want_stdin ? in[0] : devnull;
  /*
   * A launch or a holder forks: its credential change in a vfork child, which
   * shares this process's memory, would make this process non-dumpable, and
   * the service could no longer open its pipe ends through /proc/<pid>/fd.
   */
  /*
   * A launch's child starts a pid namespace (see the top of this file): the
   * clone syscall with no new stack is a fork into it, and the parent's
   * signal from it is SIGCHLD as a fork's.
   */
  pid_t pid = launching ? (pid_t)syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, NULL, NULL, NULL, NULL)
              : forking ? fork()
                        : vfork();
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    for (int s = 1; s < NSIG; s++) signal(s, SIG_DFL);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* Dies with this process; if this process died already, the command must not run. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) fail_child(report[1], STEP_PDEATHSIG, 0);
    if (parent_pid() != self) {
      errno = ESRCH;
      fail_child(report[1], STEP_PARENT, 0);
    }
    /*
     * Every descriptor made here is at FIRST_FREE_FD or above (3 and up are held
     * busy below it), so no dup2 clobbers a source not moved yet.
     */
    if (dup2(child_in, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
      fail_child(report[1], STEP_FDS, 0);
    for (long i = 0; i < nfds; i++)
      if (dup2(extra[i], 3 + (int)i) < 0) fail_child(report[1], STEP_FDS, 0);
    if (launching) {
      if (dup2(l.ns[0], l.userns_fd) < 0) fail_child(report[1], STEP_FDS, 0);
      enter_sandbox(&l, report[1]);
    }
    if (holding) become_holder(holder_id, report[1]);
    /* The busy placeholders above the extra descriptors are close-on-exec already. */
    execvpe(file, argv, envp);
    fail_child(report[1], STEP_EXEC, 0);
  }
  close(report[1]);
  report[1] = -1;
  struct failure why;
  ssize_t got = -1;
  /*
   * EOF: the child exec'd (the pipe is close-on-exec). A vfork child has by
   * now; a forked one's is waited for in the main loop (settle_start), so
   * its steps (cgroup moves, an exec) do not hold up other commands.
   */
  if (pid > 0 && !forking) {
    do got = read(report[0], &why, sizeof why);
    while (got < 0 && errno == EINTR);
  }
  if (pid < 0) {
    bad.step = STEP_NONE;
    bad.err = errno;
    emit_failure(id, &bad, forking);
  } else if (got == (ssize_t)sizeof why) {
    /* The child failed before exec and is a zombie now: reaped here, not by the SIGCHLD loop. */
    waitpid(pid, NULL, 0);
    emit_failure(id, &why, forking);
  } else {
    slot->pid = pid;
    strcpy(slot->id, id);
    slot->held[0] = out[0];
    slot->held[1] = err[0];
    slot->held[2] = in[1];
    out[0] = err[0] = in[1] = -1;
    slot->failed = 0;
    if (forking) {
      slot->report = report[0];
      report[0] = -1;
    } else {
      emit_started(slot);
    }
  }
done:
  for (int i = 0; i < 2; i++) {
    if (out[i] >= 0) close(out[i]);
    if (err[i] >= 0) close(err[i]);
    if (in[i] >= 0) close(in[i]);
    if (report[i] >= 0) close(report[i]);
  }
  for (int i = 0; i < 3; i++)
    if (l.ns[i] >= 0) close(l.ns[i]);
  /* The listening socket now lives in the child only: its accept queue is the child's. */
  for (int i = 0; i < MAX_EXTRA_FDS; i++)
    if (extra[i] >= 0) close(extra[i]);
  free(argv);
  free(envp);
}

/* fields: "C", id: the service has its own ends of the command's pipes now. */
static void close_one(char **f, int nf) {
  if (nf != 2) return;
  struct child *c = slot_of(f[1], 0);
  if (c) close_held(c);
}

/* fields: "K", id, signal number. Only a child not reaped yet is signalled (no pid reuse). */
static void kill_one(char **f, int nf) {
  if (nf != 3) return;
  struct child *c = slot_of(f[1], 1);
  if (c) kill(c->pid, (int)strtol(f[2], NULL, 10));
}

static void reap(void) {
  for (;;) {
    int status;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    for (int i = 0; i < MAX_CHILDREN; i++) {
      if (children[i].pid == pid) {
        /* Its report is in the pipe already (written before it exited): `S` or `F` first. */
        if (children[i].report >= 0) settle_start(&children[i]);
        children[i].pid = 0;
        if (!children[i].failed) emit("X %s %ld\n", children[i].id, status);
        break;
      }
    }
  }
}

/* One request (read_frame in spawner-frame.h). */
static int handle_request(void) {
  char *buf;
  char **f;
  int nf;
  if (read_frame(&buf, &f, &nf) != 0) return -1;
  if (strcmp(f[0], "S") == 0 || strcmp(f[0], "L") == 0 || strcmp(f[0], "H") == 0)
    spawn_one(f, nf);
  else if (strcmp(f[0], "K") == 0) kill_one(f, nf);
  else if (strcmp(f[0], "C") == 0) close_one(f, nf);
  free(f);
  free(buf);
  return 0;
}

/*
 * Marks every open descriptor from `first` up close-on-exec: close_range(2)
 * (Linux 5.11), else each one /proc/self/fd lists.
 */
static int cloexec_from(int first) {
  if (syscall(SYS_close_range, (unsigned)first, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return 0;
  DIR *dir = opendir("/proc/self/fd");
  if (!dir) return -1;
  int own = dirfd(dir);
  struct dirent *e;
  while ((e = readdir(dir)) != NULL) {
    int fd = atoi(e->d_name);
    if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd < first || fd == own) continue;
    int flags = fcntl(fd, F_GETFD);
    if (flags >= 0) fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
  }
  closedir(dir);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: host-spawner <service pid> (requests on stdin, events on stdout)\n");
    return 2;
  }
  /* Set before the check: a service that dies after it is seen by the signal, before it by the check. */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != (pid_t)atol(argv[1])) {
    fprintf(stderr, "host-spawner: the service %s is not this process's parent any more\n", argv[1]);
    return 1;
  }
  self = getpid();
  for (int i = 0; i < MAX_CHILDREN; i++)
    children[i].held[0] = children[i].held[1] = children[i].held[2] = children[i].report = -1;
  /* Hold 3 .. FIRST_FREE_FD-1 (close-on-exec) so every descriptor made later is above them. */
  for (int fd = 3; fd < FIRST_FREE_FD; fd++) {
    if (fcntl(fd, F_GETFD) >= 0) {
      fcntl(fd, F_SETFD, FD_CLOEXEC);
      continue;
    }
    int n = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (n >= 0 && n != fd) {
      dup3(n, fd, O_CLOEXEC);
      close(n);
    }
  }
  /*
   * Every descriptor above them that the service was started with (left open
   * across exec by whatever started it: a shell's redirection, a
   * supervisor's or a CI runner's pipe) is closed on exec too. Else each
   * launch chain handed it to the sandbox's agent and every command inside:
   * a host file or pipe in the tenant's hands (test/isolation/inherited-fds.test.ts).
   */
  if (cloexec_from(FIRST_FREE_FD) != 0) {
    perror("host-spawner: marking inherited descriptors close-on-exec");
    return 1;
  }
  devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  signal(SIGPIPE, SIG_IGN);
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, NULL);
  int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (devnull < FIRST_FREE_FD || sfd < FIRST_FREE_FD) {
    perror("host-spawner");
    return 1;
  }
  /* The requests, SIGCHLD, and the report pipe of each launch not settled yet (`starting`). */
  static struct pollfd pfd[2 + MAX_CHILDREN];
  static int starting[2 + MAX_CHILDREN];
  pfd[0] = (struct pollfd){STDIN_FILENO, POLLIN, 0};
  pfd[1] = (struct pollfd){sfd, POLLIN, 0};
  for (;;) {
    int n = 2;
    for (int i = 0; i < MAX_CHILDREN; i++) {
      if (children[i].report < 0) continue;
      pfd[n] = (struct pollfd){children[i].report, POLLIN, 0};
      starting[n++] = i;
    }
    if (poll(pfd, (nfds_t)n, -1) < 0) {
      if (errno == EINTR) continue;
      return 1;
    }
    /* Before the reaping: a launch that exec'd and exited at once is reported started first. */
    for (int k = 2; k < n; k++)
      if (pfd[k].revents && children[starting[k]].report == pfd[k].fd)
        settle_start(&children[starting[k]]);
    if (pfd[1].revents) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
      }
      reap();
    }
    /*
     * EOF or a bad frame: the service is gone or broken. Exiting kills every
     * command started here (their parent-death signal), as the service's own
     * death would.
     */
    if (pfd[0].revents && handle_request() != 0) return 0;
  }
}
