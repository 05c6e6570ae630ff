/**
 * A process the agent started: its backend, its subscribers (open Start and
 * Connect streams) and, after exit, its retained end event.
 *
 * @module
 */
import { create } from "@bufbuild/protobuf";
import {
  ProcessConfigSchema,
  ProcessEventSchema,
  type ProcessConfig,
  type ProcessEvent,
} from "../../gen/envd/process/process_pb";
import type { EventQueue } from "../event-queue";
import type { EndValues } from "./end-event";
import type { Backend, OutputKind } from "./backend";

/** A started process. */
export class ManagedProcess {
  /** The config as the caller sent it (reported by List). */
  readonly config: ProcessConfig;
  readonly tag: string | undefined;
  private backend!: Backend;
  private readonly subscribers = new Set<EventQueue<ProcessEvent>>();
  private endEvent: ProcessEvent | undefined;
  private killTimer: NodeJS.Timeout | undefined;
  private readonly endListeners: (() => void)[] = [];

  constructor(config: ProcessConfig, tag: string | undefined) {
    this.config = create(ProcessConfigSchema, config);
    this.tag = tag;
  }

  /** Binds the backend; called once right after spawning. */
  attach(backend: Backend): void {
    this.backend = backend;
  }

  get pid(): number {
    return this.backend.pid;
  }

  get isPty(): boolean {
    return this.backend.isPty;
  }

  /** True once the end event exists. */
  get ended(): boolean {
    return this.endEvent !== undefined;
  }

  /** The event that starts every stream about this process. */
  startEvent(): ProcessEvent {
    return create(ProcessEventSchema, { event: { case: "start", value: { pid: this.pid } } });
  }

  /**
   * Adds a stream. Output produced while nobody is subscribed is dropped; an
   * already ended process gets its retained end event at once.
   */
  subscribe(queue: EventQueue<ProcessEvent>): void {
    if (this.endEvent) {
      queue.push(this.endEvent);
      queue.end();
      return;
    }
    this.subscribers.add(queue);
  }

  unsubscribe(queue: EventQueue<ProcessEvent>): void {
    this.subscribers.delete(queue);
  }

  /** Backend callback: fans an output chunk out to the subscribers. */
  output(kind: OutputKind, chunk: Buffer): void {
    if (this.subscribers.size === 0) return;
    const ev = create(ProcessEventSchema, {
      event: { case: "data", value: { output: { case: kind, value: new Uint8Array(chunk) } } },
    });
    for (const q of this.subscribers) q.push(ev);
  }

  /** Backend callback: records the end, tells the subscribers and closes their streams. */
  finish(end: EndValues): void {
    if (this.killTimer) clearTimeout(this.killTimer);
    this.endEvent = create(ProcessEventSchema, { event: { case: "end", value: end } });
    for (const q of this.subscribers) {
      q.push(this.endEvent);
      q.end();
    }
    this.subscribers.clear();
    for (const l of this.endListeners.splice(0)) l();
  }

  /** Runs `listener` once the process ended. */
  onEnd(listener: () => void): void {
    if (this.endEvent) listener();
    else this.endListeners.push(listener);
  }

  /** SIGKILLs the process after `ms` (the Start call's Connect-Timeout-Ms). */
  killAfter(ms: number): void {
    this.killTimer = setTimeout(() => this.signal("SIGKILL"), ms);
  }

  write(data: Uint8Array): boolean {
    return !this.ended && this.backend.write(data);
  }

  /** Settles once stdin has taken what was written (see {@link Backend.drained}). */
  drained(): Promise<void> {
    return this.backend.drained?.() ?? Promise.resolve();
  }

  /** True while stdin holds writes its pipe has not taken: wait for {@link drained} before writing more. */
  stdinFull(): boolean {
    return this.backend.stdinFull?.() ?? false;
  }

  /** The agent's descriptor of the stdin pipe, while the service may write into it (see {@link Backend.stdinPipe}). */
  stdinPipe(): number | undefined {
    return this.ended ? undefined : this.backend.stdinPipe?.();
  }

  closeStdin(): void {
    this.backend.closeStdin();
  }

  resize(cols: number, rows: number): void {
    this.backend.resize(cols, rows);
  }

  signal(signal: "SIGTERM" | "SIGKILL"): void {
    if (!this.ended) this.backend.kill(signal);
  }

  /**
   * Resolves once the process is reaped, or after `ms` (a process stuck in
   * the kernel cannot hold the caller forever); true when it was reaped.
   */
  async waitReaped(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    try {
      return await Promise.race([this.backend.reaped.then(() => true as const), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
