import { egressContract } from '../support/egress-contract'
import { egressHarness } from '../support/egress-harness'

// The egress suite on bubblewrap with the Node forwarder (TOOLPORT_SHELL_EGRESS_RELAY=node), the relay
// of hosts without socat; egress-bwrap.test.ts runs it with socat.
const harness = egressHarness(() => ({ TOOLPORT_SANDBOX: 'bwrap', TOOLPORT_SHELL_EGRESS_RELAY: 'node' }))
egressContract(harness)
