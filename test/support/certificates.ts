import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A throw-away CA and a certificate for 127.0.0.1 it signed (openssl), in a fresh folder. */
export function testCertificates(): { ca: string; cert: string; key: string } {
  const folder = mkdtempSync(join(tmpdir(), 'toolport-test-tls-'))
  const path = (name: string) => join(folder, name)
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' })
  const ca = ['-keyout', path('ca.key'), '-out', path('ca.crt'), '-days', '2', '-subj', '/CN=toolport test CA']
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', ...ca)
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    path('server.key'),
    '-out',
    path('server.csr'),
    '-subj',
    '/CN=127.0.0.1',
  )
  writeFileSync(path('ext'), 'subjectAltName=IP:127.0.0.1\n')
  const signed = ['-out', path('server.crt'), '-days', '2', '-extfile', path('ext')]
  openssl(
    'x509',
    '-req',
    '-in',
    path('server.csr'),
    '-CA',
    path('ca.crt'),
    '-CAkey',
    path('ca.key'),
    '-CAcreateserial',
    ...signed,
  )
  return { ca: path('ca.crt'), cert: path('server.crt'), key: path('server.key') }
}
