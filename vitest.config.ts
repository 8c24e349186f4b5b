import { defineConfig } from 'vitest/config'

/**
 * One project per kind of test, so each can be run alone (`vitest run --project tools`):
 * - unit: fast tests next to the code (src/), no servers and no system packages beyond Node;
 * - contract: the HTTP contract of a real server on 127.0.0.1 (routes, errors, auth, MCP, jobs, …);
 * - tools: each tool family end to end (files, web, documents; poppler and LibreOffice where present);
 * - engines: the drivers and engines on their real backends (bubblewrap, podman, Docker, Chromium,
 *   s3rver, Miniflare's R2);
 * - runtimes: the Lambda, Workers and CLI entry points and the built Node server;
 * - stress: load, soak and hostile-input corpora;
 * - fleet: several real toolport processes on one s3rver bucket, with SIGKILL, SIGSTOP and a skewed clock;
 * - conformance: the official MCP conformance suite (its CLI, on the Node 22 in test/conformance) against
 *   /mcp, with a fixture MCP server behind toolport as stdio sources in the sandbox;
 * - clients: real MCP clients (the TypeScript SDK at three versions, the Python SDK) each against a toolport.
 */
const project = (name: string, include: string[]) => ({ extends: true as const, test: { name, include } })

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: suites that start servers run side by side without starving each other.
    maxWorkers: 2,
    projects: [
      project('unit', ['src/**/*.test.ts']),
      project('contract', ['test/contract/**/*.test.ts']),
      project('tools', ['test/tools/**/*.test.ts']),
      project('engines', ['test/engines/**/*.test.ts']),
      project('runtimes', ['test/runtimes/**/*.test.ts']),
      project('stress', ['test/stress/**/*.test.ts']),
      project('conformance', ['test/conformance/**/*.test.ts']),
      project('clients', ['test/clients/**/*.test.ts']),
      // Each fleet file starts several service processes: one file at a time on two cores.
      { extends: true as const, test: { name: 'fleet', include: ['test/fleet/**/*.test.ts'], fileParallelism: false } },
    ],
  },
})
