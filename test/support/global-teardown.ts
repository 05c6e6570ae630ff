/**
 * Jest's global teardown: sweeps what services killed by tests leave behind.
 * A `kill -9`'d service cannot remove its nftables table, and the next
 * service to start removes it; when no service starts after the last test,
 * the table would stay on the host until then. Runs once, in jest's own
 * process, after every test file has ended.
 */
import { removeTablesOfDeadServices } from "../../src/local/runtime/network";

export default async function globalTeardown(): Promise<void> {
  // Not root, or no nft: nothing of ours can be on the host either.
  if (process.getuid?.() !== 0) return;
  // In-band runs start services in this very process; all of them have closed by now.
  const removed = await removeTablesOfDeadServices(process.pid).catch(() => []);
  if (removed.length > 0) {
    process.stderr.write(
      `global teardown: removed ${removed.length} nftables tables of ended services\n`,
    );
  }
}
