// The egress benchmark's upstream hosts in a process of their own, so the proxy under test does not
// share its event loop with them: the egress suites' fixtures (HTTP and HTTPS on 127.0.0.1).
import { startEgressFixtures } from '../../test/support/egress-fixtures'

const fixtures = await startEgressFixtures()
console.log(
  JSON.stringify({ ready: true, http: fixtures.http, https: fixtures.https, certificate: fixtures.certificate }),
)
process.once('SIGTERM', () => {
  void fixtures.close().then(() => process.exit(0))
})
