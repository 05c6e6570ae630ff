/*
 * The agent's spawner: a small, long-lived process inside the sandbox that
 * starts commands for the agent, so that a command costs a vfork of this
 * process (no page tables copied, nothing to tear down at the child's exec)
 * instead of a fork of the agent's ~60 MiB Node heap (the page tables copied,
 * then write-protect faults in the agent and an exit_mmap in the child: most
 * of a `commands.run("true")`).
 *
 * A vfork child shares this process's memory, and its setuid before the exec
 * makes that memory not dumpable, so the agent's open of the pipe ends of a
 * command through /proc/<pid>/fd (which needs this process dumpable) fails
 * with EACCES while such a child runs or once it has. So this process makes
 * itself dumpable again after each vfork, and starts no command while the
 * agent has not yet taken the pipe ends of the one before (`C`): a start
 * request that comes meanwhile waits here, in order. The agent only opens
 * pipe ends between `S` and `C`, so no open can meet a vfork child.
 *
 * Started once by the agent (src/agent/process/spawner.ts), which owns the
 * protocol (described there); this side only parses it. It is single
 * threaded, so vfork with set*id in the child is safe. The child gets what
 * envd's children get (Go's os/exec): stdio on pipes, so that a command can
 * open /dev/stdout, /dev/stderr or /dev/stdin again (a socket there fails
 * with ENXIO); /dev/null for an absent stdin; supplementary groups dropped,
 * the gid then the uid set, the working directory, every signal's default
 * disposition and an empty mask. The agent's ends of the pipes stay open
 * here until the agent has opened them through /proc/<pid>/fd (`C`).
 *
 * Build: cc -O2 -static (scripts/bundle-agent.js).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../wire/spawner-frame.h"

#define MAX_CHILDREN 4096

struct child {
  /* The command's pid until it is reaped, then 0. */
  pid_t pid;
  /* The agent's ends of stdout, stderr and stdin (-1: none), held until `C`. */
  int held[3];
  char id[24];
};

static struct child children[MAX_CHILDREN];
static int devnull = -1;
/* Commands started whose pipe ends the agent has not taken yet (`C` to come): 0 or 1. */
static int untaken = 0;

/* A start request read while `untaken`: it runs once the agent sent `C`, in order. */
struct deferred {
  char *buf;
  char **f;
  int nf;
  struct deferred *next;
};
static struct deferred *deferred_head = NULL, **deferred_tail = &deferred_head;

static int in_use(const struct child *c) {
  return c->pid > 0 || c->held[0] >= 0 || c->held[1] >= 0 || c->held[2] >= 0;
}

static void close_held(struct child *c) {
  if (c->held[0] >= 0 || c->held[1] >= 0 || c->held[2] >= 0) untaken--;
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

/* fields: "S", id, uid, gid, stdin ("1" or "0"), cwd, file, argc, argv..., env... */
static void spawn_one(char **f, int nf) {
  const char *id = nf > 1 ? f[1] : "?";
  if (nf < 8 || strlen(id) >= sizeof children[0].id) {
    emit("F %s %ld\n", strlen(id) < sizeof children[0].id ? id : "?", EINVAL);
    return;
  }
  uid_t uid = (uid_t)strtoul(f[2], NULL, 10);
  gid_t gid = (gid_t)strtoul(f[3], NULL, 10);
  int want_stdin = f[4][0] == '1';
  const char *cwd = f[5];
  const char *file = f[6];
  long argc = strtol(f[7], NULL, 10);
  if (argc < 1 || 8 + argc > nf) {
    emit("F %s %ld\n", id, EINVAL);
    return;
  }
  char **argv = calloc((size_t)argc + 1, sizeof *argv);
  char **envp = calloc((size_t)(nf - 8 - argc) + 1, sizeof *envp);
  struct child *slot = NULL;
  for (int i = 0; i < MAX_CHILDREN && !slot; i++)
    if (!in_use(&children[i])) slot = &children[i];
  /* [0] read, [1] write: the child gets out[1], err[1] and in[0]. */
  int out[2] = {-1, -1}, err[2] = {-1, -1}, in[2] = {-1, -1};
  /* Set by the vfork child, which shares this memory, when it fails before its exec. */
  volatile int child_errno = 0;
  if (!argv || !envp || !slot) {
    emit("F %s %ld\n", id, EAGAIN);
    goto done;
  }
  for (long i = 0; i < argc; i++) argv[i] = f[8 + i];
  for (int i = 0; i < nf - 8 - argc; i++) envp[i] = f[8 + argc + i];
  /*
   * Owned by the command's user (a pipe is its creator's, mode 0600): a
   * command reopening /dev/stdout goes through the pipe's permissions.
   */
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 ||
      (want_stdin && pipe2(in, O_CLOEXEC) != 0) || fchown(out[0], uid, gid) != 0 ||
      fchown(err[0], uid, gid) != 0 || (want_stdin && fchown(in[0], uid, gid) != 0)) {
    emit("F %s %ld\n", id, errno);
    goto done;
  }
  int child_in = want_stdin ? in[0] : devnull;
  pid_t pid = vfork();
  if (pid == 0) {
    /*
     * Every other signal is at its default here already (main), and a
     * handler would not survive the exec anyway: only SIGPIPE, ignored here,
     * would stay ignored in the command.
     */
    sigset_t none;
    sigemptyset(&none);
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* Every pipe end is above 2 (0-2 are this process's own), so no dup2 clobbers another. */
    if (dup2(child_in, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0 || chdir(cwd) != 0) {
      child_errno = errno;
      _exit(127);
    }
    setgroups(0, NULL);
    if (setgid(gid) != 0 || setuid(uid) != 0) {
      child_errno = errno;
      _exit(127);
    }
    execve(file, argv, envp);
    child_errno = errno;
    _exit(127);
  }
  int vfork_errno = errno;
  /* The child's setuid made the memory it shared with this process not dumpable (see top). */
  prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
  if (pid < 0) {
    emit("F %s %ld\n", id, vfork_errno);
  } else if (child_errno != 0) {
    /* The child failed before exec and is a zombie now: reaped here, not by the SIGCHLD loop. */
    waitpid(pid, NULL, 0);
    emit("F %s %ld\n", id, child_errno);
  } else {
    slot->pid = pid;
    strcpy(slot->id, id);
    slot->held[0] = out[0];
    slot->held[1] = err[0];
    slot->held[2] = in[1];
    out[0] = err[0] = in[1] = -1;
    untaken++;
    char line[96];
    emit_line(line, snprintf(line, sizeof line, "S %s %ld %d %d %d\n", id, (long)pid,
                             slot->held[0], slot->held[1], slot->held[2]));
  }
done:
  for (int i = 0; i < 2; i++) {
    if (out[i] >= 0) close(out[i]);
    if (err[i] >= 0) close(err[i]);
    if (in[i] >= 0) close(in[i]);
  }
  free(argv);
  free(envp);
}

/* fields: "C", id: the agent has its own ends of the command's pipes now. */
static void close_one(char **f, int nf) {
  if (nf != 2) return;
  struct child *c = slot_of(f[1], 0);
  if (c) close_held(c);
}

/* Runs the start requests that waited for `C`, until one is waiting for its own. */
static void run_deferred(void) {
  while (untaken == 0 && deferred_head) {
    struct deferred *d = deferred_head;
    deferred_head = d->next;
    if (!deferred_head) deferred_tail = &deferred_head;
    spawn_one(d->f, d->nf);
    free(d->f);
    free(d->buf);
    free(d);
  }
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
        children[i].pid = 0;
        emit("X %s %ld\n", children[i].id, status);
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
  if (strcmp(f[0], "S") == 0 && (untaken > 0 || deferred_head)) {
    struct deferred *d = malloc(sizeof *d);
    if (!d) return -1;
    *d = (struct deferred){buf, f, nf, NULL};
    *deferred_tail = d;
    deferred_tail = &d->next;
    return 0;
  }
  if (strcmp(f[0], "S") == 0) spawn_one(f, nf);
  else if (strcmp(f[0], "K") == 0) kill_one(f, nf);
  else if (strcmp(f[0], "C") == 0) {
    close_one(f, nf);
    run_deferred();
  }
  free(f);
  free(buf);
  return 0;
}

int main(int argc, char **argv) {
  (void)argv;
  if (argc != 1) {
    fprintf(stderr, "usage: spawner (requests on stdin, events on stdout)\n");
    return 2;
  }
  for (int i = 0; i < MAX_CHILDREN; i++) children[i].held[0] = children[i].held[1] = children[i].held[2] = -1;
  devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  /* Every signal at its default, as the commands get them (an ignored one would outlive their exec). */
  for (int s = 1; s < NSIG; s++) signal(s, SIG_DFL);
  signal(SIGPIPE, SIG_IGN);
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, NULL);
  int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (devnull < 0 || sfd < 0) {
    perror("spawner");
    return 1;
  }
  struct pollfd pfd[2] = {{STDIN_FILENO, POLLIN, 0}, {sfd, POLLIN, 0}};
  for (;;) {
    if (poll(pfd, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return 1;
    }
    if (pfd[1].revents) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
      }
      reap();
    }
    /* EOF or a bad frame: the agent is gone or broken; the children live on. */
    if (pfd[0].revents && handle_request() != 0) return 0;
  }
}
