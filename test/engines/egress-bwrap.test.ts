import { egressContract } from '../support/egress-contract'

// The sandbox's network on real bubblewrap and the real proxy: the host's curl, python3 and node inside.
egressContract(() => ({ TOOLPORT_SANDBOX: 'bwrap' }))
