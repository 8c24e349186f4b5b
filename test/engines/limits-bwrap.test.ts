import { limitsContract } from '../support/limits-contract'

// The workspace limits on real bubblewrap: attacks through execute_command over HTTP.
limitsContract(() => ({ TOOLPORT_SANDBOX: 'bwrap' }))
