/**
 * The typed client of the in-sandbox interface (envd): processes, terminals,
 * filesystem, watches, file transfer, signed URLs, metrics.
 *
 * @module
 */
export { createSandboxClient } from "./client";
export type { SandboxClient, SandboxClientOptions } from "./client";
export type { ComposeOptions } from "./compose";
export type { EntryInfo, EntryType, FilesystemEvent, FilesystemEventType } from "./entry";
export { commandResultOf } from "./errors";
export { ERROR_CODE_BY_RPC_CODE } from "../../wire/envd-status";
export type { CommandFailedError, CommandResult } from "./errors";
export type { DownloadFileOptions } from "./files-read";
export type { UploadFileOptions } from "./files-transfer";
export type { TransferOptions, WrittenFile } from "./transfer-options";
export { isMultipartSafePath } from "./files-upload-batch";
export type { UploadEntry } from "./files-upload-batch";
export type { FsCallOptions, ListDirOptions } from "./filesystem";
export type { ConnectOptions, ProcessInfo, StartOptions } from "./process";
export type { ProcessCallOptions, ProcessSignal } from "./process-control";
export type {
  ProcessEndEvent,
  ProcessEvent,
  ProcessHandle,
  ProcessOutputEvent,
  ProcessResult,
  WaitOptions,
} from "./process-handle";
export type { PtyOptions, PtySize } from "./pty";
export { fileSignature } from "./signing";
export type { FileOperation, SignatureInput, SignedUrlOptions } from "./signing";
export type { SandboxMetrics, StatsCallOptions } from "./stats";
export type { ProcessSelectorInput } from "./validate";
export type { DirWatch, WatchOptions } from "./watch";
