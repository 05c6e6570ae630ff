/** The cdktf-basic example synthesized with cdktf and applied with terraform; see support/e2e-suite.ts. */
import { describeEndToEnd } from "./support/e2e-suite";

describeEndToEnd("cdktf");
