import { egressContract } from '../support/egress-contract'
import { egressHarness } from '../support/egress-harness'
import { egressLimitsContract } from '../support/egress-limits-contract'

// The sandbox's network on real bubblewrap and the real proxy: the host's curl, python3 and node inside.
const harness = egressHarness(() => ({ TOOLPORT_SANDBOX: 'bwrap' }))
egressContract(harness)
egressLimitsContract(harness)
