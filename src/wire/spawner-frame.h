/*
 * The C side of what both spawners share (src/wire/spawner-protocol.ts is
 * the Node side): the service's host spawner (src/local/runtime/host-spawner.c)
 * and the agent's (src/agent/process/spawner.c) read requests framed the same
 * way and write their events as lines on stdout. Included by each spawner's
 * one source file; it holds static functions only.
 */
#ifndef SPAWNER_FRAME_H
#define SPAWNER_FRAME_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A request larger than this is a broken caller, not a command line. */
#define MAX_FRAME (64u * 1024u * 1024u)

/* Writes one event line to the caller (stdout); exits when the caller is gone. */
static void emit_line(const char *line, int n) {
  for (int off = 0; off < n;) {
    ssize_t w = write(STDOUT_FILENO, line + off, (size_t)(n - off));
    if (w < 0) {
      if (errno == EINTR) continue;
      _exit(0);
    }
    off += (int)w;
  }
}

/* One event line from `fmt` with an id and a number (`X id status`, `F id errno`). */
static void emit(const char *fmt, const char *id, long value) {
  char line[96];
  emit_line(line, snprintf(line, sizeof line, fmt, id, value));
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

/*
 * Reads one request from stdin: a 4-byte little-endian length, then
 * NUL-terminated fields. 0 with the fields in `*f` (`*nf` of them, pointing
 * into `*buf`; the caller frees both), or -1 on EOF or a bad frame.
 */
static int read_frame(char **buf, char ***f, int *nf) {
  uint8_t len_le[4];
  if (read_full(STDIN_FILENO, len_le, 4) != 0) return -1;
  uint32_t len = (uint32_t)len_le[0] | (uint32_t)len_le[1] << 8 | (uint32_t)len_le[2] << 16 |
                 (uint32_t)len_le[3] << 24;
  if (len == 0 || len > MAX_FRAME) return -1;
  char *b = malloc(len);
  if (!b || read_full(STDIN_FILENO, b, len) != 0 || b[len - 1] != '\0') {
    free(b);
    return -1;
  }
  int n = 0;
  for (uint32_t i = 0; i < len; i++) n += b[i] == '\0';
  char **fields = calloc((size_t)n, sizeof *fields);
  if (!fields) {
    free(b);
    return -1;
  }
  for (int i = 0, start = 0; i < n; i++) {
    fields[i] = b + start;
    start += (int)strlen(b + start) + 1;
  }
  *buf = b;
  *f = fields;
  *nf = n;
  return 0;
}

#endif
