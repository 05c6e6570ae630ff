/**
 * The egress edge: where nftables sends (TPROXY) a sandbox's new outbound
 * TCP flow that its `denyOut` would drop while its `allowOut` names domains.
 * The flow passes when the name it asks for (TLS SNI, or the HTTP `Host`)
 * matches an allowed domain entry AND its original destination is an address
 * that name resolves to for the service; the edge then connects to that same
 * destination and splices the two, sending on every byte unchanged.
 * Anything else is reset. Each flow is bounded while it is read (bytes, time,
 * flows waiting per sandbox), so a hostile sandbox can stall only itself.
 *
 * A sandbox with `network.rules` also sends its TCP to ports 80 and 443 here
 * whatever its address rules say. Such a flow passes when its destination
 * address is allowed (an `allowOut` block, or no `denyOut` block) or its
 * name is, as above: a rule grants nothing. When it passes and its name
 * matches a rule key (exact first, then the longest wildcard), the edge
 * terminates it (terminate.ts) and applies the rules; otherwise it is
 * spliced unchanged.
 *
 * A sandbox with an `egressProxy` sends all its TCP here (after its
 * address rules: what `denyOut` drops without a domain stays dropped), and
 * each flow that passes is tunneled through the proxy (socks-upstream.ts):
 * by name when it passed by name, else by address. When the proxy cannot be
 * reached or refuses, the flow is reset and the sandbox's log says why:
 * egress fails closed, never straight out.
 *
 * Flows are told apart by their source address, the sandbox's own (forged
 * sources are dropped before they get here), and the policy of that address
 * is what {@link EgressEdge.setPolicy} last set.
 *
 * @module
 */
import * as net from "node:net";
import { matchDomainEntry, normalizeRequestedName } from "../../wire/egress-domains";
import type { NetworkRules } from "../../wire/egress-transforms";
import { ALWAYS_DENIED, cidrContains } from "../runtime/egress-rules";
import type { EdgeCa } from "./edge-ca";
import { createNameResolver, type NameResolver } from "./name-resolver";
import { peekRequestedName, type PeekLimits } from "./requested-name";
import { connectThroughProxy, ProxyFailure } from "./socks-upstream";
import { createTerminator, type UpstreamAgents } from "./terminate";
import type { EgressProxyConfig } from "../../wire/egress-proxy";
import { transparentListener } from "./transparent-listener";

/** What one sandbox may reach through the edge, and how its requests are transformed. */
interface EdgePolicy {
  /** The sandbox, for its log. */
  sandboxID: string;
  /** Domain entries of its `allowOut`, lower-cased. */
  domains: readonly string[];
  /** CIDR blocks of its `allowOut` and of its `denyOut`. */
  allowCidrs: readonly string[];
  denyCidrs: readonly string[];
  /** Its `network.rules`, keys lower-cased. */
  rules: NetworkRules;
  /** Its `network.egressProxy`: every flow that passes is tunneled through it. */
  proxy?: EgressProxyConfig | undefined;
}

/** The running edge of one service. */
export interface EgressEdge {
  /** Listens (once; later calls wait for the same socket) and returns the port on 127.0.0.1. */
  port(): Promise<number>;
  /** Sets (or with undefined removes, closing its flows) the policy of a sandbox's address. */
  setPolicy(sandboxAddress: string, policy: EdgePolicy | undefined): void;
  /** Stops listening and closes every flow. */
  close(): Promise<void>;
}

/** Options of {@link createEgressEdge}. */
export interface EgressEdgeOptions {
  /** The resolvers the edge asks (the sandboxes' own); the host's resolv.conf when empty. */
  resolvers: readonly string[];
  /** @default 32 KiB within 10 s */
  peekLimits?: PeekLimits | undefined;
  /** Flows of one sandbox being read at once; more are reset. @default 256 */
  maxPendingPerSandbox?: number | undefined;
  /** The CA whose certificates terminated flows present. */
  ca: EdgeCa;
  /** PEM CAs trusted for upstream connections besides the host's store. @default none */
  upstreamCa?: readonly string[] | undefined;
  /** The current value of a secret by name (undefined: none). @default no secret exists */
  secret?: ((name: string) => string | undefined) | undefined;
  /** A line for a sandbox's own log. @default dropped */
  sandboxLog?: ((sandboxID: string, line: string) => void) | undefined;
}

const DEFAULT_LIMITS: PeekLimits = { maxBytes: 32 * 1024, timeoutMs: 10_000 };

interface SandboxFlows {
  policy: EdgePolicy;
  pending: number;
  sockets: Set<net.Socket>;
  /** Upstream pools of its terminated flows, made at the first one. */
  agents?: UpstreamAgents;
}

/** The rule key matching `name` (exact, then longest wildcard), when there is one. */
function ruleKeyFor(policy: EdgePolicy, name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  return matchDomainEntry(Object.keys(policy.rules), name);
}

/** Creates the edge; it listens only once a sandbox needs it ({@link EgressEdge.port}). */
export function createEgressEdge(options: EgressEdgeOptions): EgressEdge {
  const limits = options.peekLimits ?? DEFAULT_LIMITS;
  const maxPending = options.maxPendingPerSandbox ?? 256;
  const resolver: NameResolver = createNameResolver(options.resolvers);
  const sandboxes = new Map<string, SandboxFlows>();
  const log = options.sandboxLog ?? (() => undefined);
  const terminator = createTerminator({
    ca: options.ca,
    upstreamCa: options.upstreamCa,
    secret: options.secret ?? (() => undefined),
    log,
  });
  let listening: Promise<net.Server> | undefined;

  /** Whether a flow passes: by its address, by the name it asked for, or not at all. */
  async function allowed(
    policy: EdgePolicy,
    requested: string | undefined,
    dst: string,
  ): Promise<"address" | "name" | false> {
    if (ALWAYS_DENIED.some((c) => cidrContains(c, dst))) return false;
    // Flows sent here for their rules may be allowed by address alone, as without the edge.
    if (policy.allowCidrs.some((c) => cidrContains(c, dst))) return "address";
    if (!policy.denyCidrs.some((c) => cidrContains(c, dst))) return "address";
    if (requested === undefined) return false;
    if (matchDomainEntry(policy.domains, requested) === undefined) return false;
    return (await resolver.resolvesTo(requested, dst)) ? "name" : false;
  }

  async function onFlow(socket: net.Socket): Promise<void> {
    socket.on("error", () => undefined);
    const flows = sandboxes.get(socket.remoteAddress ?? "");
    const dst = socket.localAddress;
    const dport = socket.localPort;
    if (!flows || flows.pending >= maxPending || !dst || !dport || !net.isIPv4(dst)) {
      socket.resetAndDestroy();
      return;
    }
    flows.sockets.add(socket);
    socket.once("close", () => flows.sockets.delete(socket));
    flows.pending++;
    let pass: "address" | "name" | false = false;
    let head: Buffer[] = [];
    let requested: string | undefined;
    try {
      const peeked = await peekRequestedName(socket, limits);
      head = peeked.head;
      requested = peeked.name === undefined ? undefined : normalizeRequestedName(peeked.name);
      // The policy may have been replaced (PUT /network) while the flow was read.
      pass =
        sandboxes.get(socket.remoteAddress ?? "") === flows &&
        (await allowed(flows.policy, requested, dst));
    } finally {
      flows.pending--;
    }
    if (!pass || socket.destroyed) {
      if (!socket.destroyed) socket.resetAndDestroy();
      return;
    }
    const proxy = flows.policy.proxy;
    // Remote DNS for a flow allowed by its name: the proxy resolves the name, as on E2B.
    const target = proxy && pass === "name" && requested !== undefined ? requested : dst;
    const ruleKey = ruleKeyFor(flows.policy, requested);
    if (ruleKey === undefined || requested === undefined) {
      const upstream = proxy
        ? connectThroughProxy(proxy, target, dport)
        : Promise.resolve(
            net.connect({ host: dst, port: dport, noDelay: true, allowHalfOpen: true }),
          );
      upstream.then(
        (u) => splice(socket, head, u, flows.sockets),
        (err: unknown) => {
          if (err instanceof ProxyFailure) log(flows.policy.sandboxID, err.message);
          if (!socket.destroyed) socket.resetAndDestroy();
        },
      );
      return;
    }
    flows.agents ??= terminator.agents(
      proxy,
      proxy ? (err) => log(flows.policy.sandboxID, err.message) : undefined,
    );
    terminator.serve(socket, head, head[0]?.[0] === 0x16, {
      name: requested,
      dst,
      upstreamHost: target,
      dport,
      rulesNow: () => {
        const key = ruleKeyFor(flows.policy, requested);
        return key === undefined
          ? undefined
          : { ruleKey: key, rules: flows.policy.rules[key] ?? [] };
      },
      sandboxID: flows.policy.sandboxID,
      agents: flows.agents,
    });
  }

  return {
    port() {
      listening ??= transparentListener().then(
        (transparent) =>
          new Promise<net.Server>((resolve, reject) => {
            // Half-open both ways: a client may shut its side and still read the answer.
            const server = net.createServer({ allowHalfOpen: true }, (s) => void onFlow(s));
            server.once("error", reject);
            server.listen(transparent, () => resolve(server));
          }),
      );
      return listening.then((s) => (s.address() as net.AddressInfo).port);
    },
    setPolicy(address, policy) {
      const current = sandboxes.get(address);
      if (policy) {
        if (current) {
          // Pools tunneled through the old proxy (or none) must not serve the new one.
          if (JSON.stringify(current.policy.proxy) !== JSON.stringify(policy.proxy)) {
            current.agents?.destroy();
            delete current.agents;
          }
          current.policy = policy;
        } else sandboxes.set(address, { policy, pending: 0, sockets: new Set() });
        return;
      }
      sandboxes.delete(address);
      for (const s of current?.sockets ?? []) s.destroy();
      current?.agents?.destroy();
    },
    async close() {
      for (const address of [...sandboxes.keys()]) this.setPolicy(address, undefined);
      const server = await listening?.catch(() => undefined);
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    },
  };
}

/** Sends `head` upstream (the original destination, or a tunnel to it), then relays both ways. */
function splice(
  socket: net.Socket,
  head: Buffer[],
  upstream: net.Socket,
  tracked: Set<net.Socket>,
): void {
  if (socket.destroyed) {
    upstream.destroy();
    return;
  }
  tracked.add(upstream);
  socket.setNoDelay(true);
  const closeBoth = () => {
    tracked.delete(upstream);
    socket.destroy();
    upstream.destroy();
  };
  upstream.on("error", () => (socket.destroyed ? undefined : socket.resetAndDestroy()));
  socket.on("error", closeBoth);
  upstream.once("close", closeBoth);
  socket.once("close", closeBoth);
  for (const chunk of head) upstream.write(chunk);
  socket.pipe(upstream);
  upstream.pipe(socket);
}
