/*
 * The agent's spawner: a small, long-lived process inside the sandbox that
 * starts commands for the agent, so that a command costs a vfork of this
 * ~1 MiB process instead of a fork of the agent's ~60 MiB Node heap (the
 * page tables copied, then write-protect faults in the agent and an exit_mmap
 * in the child: most of a `commands.run("true")`).
 *
 * Started once by the agent (src/agent/process/spawner.ts), which owns the
 * protocol (described there); this side only parses it. It is single
 * threaded, so vfork with set*id in the child is safe. The child gets what
 * libuv gives a child_process child today: stdio on unix stream sockets (the
 * agent's accepted ends of the connections made here), /dev/null for an
 * absent stdin, supplementary groups dropped, the gid then the uid set, the
 * working directory, every signal's default disposition and an empty mask.
 *
 * Build: cc -O2 -static (scripts/bundle-agent.js).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_FRAME (64u * 1024u * 1024u)
#define MAX_CHILDREN 4096
#define TOKEN_LEN 32

struct child {
  pid_t pid;
  char id[24];
};

static struct child children[MAX_CHILDREN];
static struct sockaddr_un agent_addr;
static socklen_t agent_addr_len;
static int devnull = -1;

/* Writes one event line to the agent (stdout); the agent exits us on EOF. */
static void emit(const char *fmt, const char *id, long value) {
  char line[96];
  int n = snprintf(line, sizeof line, fmt, id, value);
  for (int off = 0; off < n;) {
    ssize_t w = write(STDOUT_FILENO, line + off, (size_t)(n - off));
    if (w < 0) {
      if (errno == EINTR) continue;
      _exit(0);
    }
    off += (int)w;
  }
}

static int read_full(int fd, void *buf, size_t len) {
  for (size_t off = 0; off < len;) {
    ssize_t r = read(fd, (char *)buf + off, len - off);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    off += (size_t)r;
  }
  return 0;
}

/* A stream to the agent, announced by the token and the stream's kind. */
static int connect_stream(const char *token, char kind) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  char header[TOKEN_LEN + 1];
  memcpy(header, token, TOKEN_LEN);
  header[TOKEN_LEN] = kind;
  int rc = connect(fd, (struct sockaddr *)&agent_addr, agent_addr_len);
  if (rc != 0 && errno == ECONNREFUSED && agent_addr_len != sizeof agent_addr) {
    /* Node 20 binds an abstract name padded with NULs to the whole sun_path. */
    agent_addr_len = sizeof agent_addr;
    rc = connect(fd, (struct sockaddr *)&agent_addr, agent_addr_len);
  }
  if (rc != 0 || write(fd, header, sizeof header) != (ssize_t)sizeof header) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

static struct child *slot_of(const char *id) {
  for (int i = 0; i < MAX_CHILDREN; i++)
    if (children[i].pid > 0 && strcmp(children[i].id, id) == 0) return &children[i];
  return NULL;
}

/* fields: "S", id, uid, gid, stdin ("1" or "0"), cwd, token, file, argc, argv..., env... */
static void spawn_one(char **f, int nf) {
  const char *id = nf > 1 ? f[1] : "?";
  if (nf < 9 || strlen(id) >= sizeof children[0].id || strlen(f[6]) != TOKEN_LEN) {
    emit("F %s %ld\n", strlen(id) < sizeof children[0].id ? id : "?", EINVAL);
    return;
  }
  uid_t uid = (uid_t)strtoul(f[2], NULL, 10);
  gid_t gid = (gid_t)strtoul(f[3], NULL, 10);
  int want_stdin = f[4][0] == '1';
  const char *cwd = f[5];
  const char *token = f[6];
  const char *file = f[7];
  long argc = strtol(f[8], NULL, 10);
  if (argc < 1 || 9 + argc > nf) {
    emit("F %s %ld\n", id, EINVAL);
    return;
  }
  char **argv = calloc((size_t)argc + 1, sizeof *argv);
  char **envp = calloc((size_t)(nf - 9 - argc) + 1, sizeof *envp);
  struct child *slot = NULL;
  for (int i = 0; i < MAX_CHILDREN && !slot; i++)
    if (children[i].pid == 0) slot = &children[i];
  int in = -1, out = -1, err = -1;
  volatile int child_errno = 0;
  if (!argv || !envp || !slot) {
    emit("F %s %ld\n", id, EAGAIN);
    goto done;
  }
  for (long i = 0; i < argc; i++) argv[i] = f[9 + i];
  for (int i = 0; i < nf - 9 - argc; i++) envp[i] = f[9 + argc + i];
  out = connect_stream(token, '1');
  err = out < 0 ? -1 : connect_stream(token, '2');
  in = err < 0 ? -1 : want_stdin ? connect_stream(token, '0') : devnull;
  if (out < 0 || err < 0 || in < 0) {
    emit("F %s %ld\n", id, errno);
    goto done;
  }
  pid_t pid = vfork();
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    for (int s = 1; s < NSIG; s++) signal(s, SIG_DFL);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0 || chdir(cwd) != 0) {
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
  if (pid < 0) {
    emit("F %s %ld\n", id, errno);
  } else if (child_errno != 0) {
    /* The child failed before exec and is a zombie now: reaped by the SIGCHLD loop. */
    waitpid(pid, NULL, 0);
    emit("F %s %ld\n", id, child_errno);
  } else {
    slot->pid = pid;
    strcpy(slot->id, id);
    emit("S %s %ld\n", id, pid);
  }
done:
  if (in >= 0 && in != devnull) close(in);
  if (out >= 0) close(out);
  if (err >= 0) close(err);
  free(argv);
  free(envp);
}

/* fields: "K", id, signal number. Only a child not reaped yet is signalled (no pid reuse). */
static void kill_one(char **f, int nf) {
  if (nf != 3) return;
  struct child *c = slot_of(f[1]);
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

/* One request: a 4-byte little-endian length, then NUL-terminated fields. */
static int handle_request(void) {
  uint8_t len_le[4];
  if (read_full(STDIN_FILENO, len_le, 4) != 0) return -1;
  uint32_t len = (uint32_t)len_le[0] | (uint32_t)len_le[1] << 8 | (uint32_t)len_le[2] << 16 |
                 (uint32_t)len_le[3] << 24;
  if (len == 0 || len > MAX_FRAME) return -1;
  char *buf = malloc(len);
  if (!buf || read_full(STDIN_FILENO, buf, len) != 0 || buf[len - 1] != '\0') return -1;
  int nf = 0;
  for (uint32_t i = 0; i < len; i++) nf += buf[i] == '\0';
  char **f = calloc((size_t)nf, sizeof *f);
  if (!f) return -1;
  for (int i = 0, start = 0; i < nf; i++) {
    f[i] = buf + start;
    start += (int)strlen(buf + start) + 1;
  }
  if (strcmp(f[0], "S") == 0) spawn_one(f, nf);
  else if (strcmp(f[0], "K") == 0) kill_one(f, nf);
  free(f);
  free(buf);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2 || strlen(argv[1]) + 1 >= sizeof agent_addr.sun_path) {
    fprintf(stderr, "usage: spawner <abstract socket name>\n");
    return 2;
  }
  agent_addr.sun_family = AF_UNIX;
  agent_addr.sun_path[0] = '\0';
  memcpy(agent_addr.sun_path + 1, argv[1], strlen(argv[1]));
  agent_addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(argv[1]));
  devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
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
