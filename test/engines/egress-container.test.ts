import { ensureTestImage } from '../support/container-image'
import { egressContract } from '../support/egress-contract'
import { egressHarness } from '../support/egress-harness'
import { egressLimitsContract } from '../support/egress-limits-contract'

// The same egress suite on the container executor (podman, --network none): the forwarder runs from
// the host's node, loader and libraries bound into the container, so the image needs no node of its own.
const env: Record<string, string> = { TOOLPORT_SANDBOX: 'container', TOOLPORT_CONTAINER_ENGINE: 'podman' }
const harness = egressHarness(
  () => env,
  async () => {
    env.TOOLPORT_CONTAINER_IMAGE = await ensureTestImage('podman')
  },
)
egressContract(harness)
egressLimitsContract(harness)
