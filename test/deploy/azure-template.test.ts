import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { MemoryBlobStore } from '../../src/adapters/storage/memory-blob-store.js';
import { CONFIG_VARIABLES, loadConfig } from '../../src/app/config.js';
import { STREAMING_MALLOC_TRIM_THRESHOLD_BYTES } from '../../src/app/heap-tuning.js';
import { packageRoot } from '../../src/app/package-root.js';
import { openApi } from '../support/contract.js';
import { startGateway } from '../support/gateway.js';

/*
 * The ARM template (deploy/azure/azuredeploy.json) cannot be deployed from here; it is read as
 * JSON and checked for what the gateway and a demanding operator need: the runtime, the start
 * command, the health check on a real unauthenticated route, the settings (exactly the gateway's
 * configuration variables, from config.ts), the identity and its one role on the one container.
 */

interface ArmParameter {
  readonly type: string;
  readonly defaultValue?: unknown;
  readonly minValue?: number;
}

interface ArmResource {
  readonly type: string;
  readonly apiVersion: string;
  readonly name: string;
  readonly condition?: string;
  readonly kind?: string;
  readonly scope?: string;
  readonly sku?: Record<string, unknown>;
  readonly identity?: { readonly type: string };
  readonly dependsOn?: readonly string[];
  readonly properties: Record<string, unknown>;
}

interface ArmTemplate {
  readonly $schema: string;
  readonly parameters: Record<string, ArmParameter>;
  readonly variables: Record<string, string>;
  readonly resources: readonly ArmResource[];
  readonly outputs: Record<string, { readonly type: string; readonly value: string }>;
}

const templatePath = (): string => join(packageRoot(), 'deploy', 'azure', 'azuredeploy.json');
const examplePath = (): string => join(packageRoot(), 'deploy', 'azure', 'azuredeploy.parameters.example.json');

const storageBlobDataReader = '2a2b9908-6ea1-4ae2-8e65-a410df84e7d1';
const keyVaultSecretsUser = '4633458b-17de-408a-b874-0445c86b69e6';

/**
 * The one setting that is not the gateway's: WEBSITE_RUN_FROM_PACKAGE=1 mounts the deployed zip
 * read-only as wwwroot instead of extracting its ~40 000 files onto /home's network share. Every
 * instance then switches to a new version at once (never a half-extracted node_modules) and
 * starts faster; the gateway writes nothing there (its registry is CLIENTS_FILE, on /home/data).
 * No SCM_DO_BUILD_DURING_DEPLOYMENT: a zip deployment runs no build unless asked to, and this zip
 * is already built.
 */
/**
 * Settings of the platform, not the gateway: the package run as it is, and glibc's trim threshold for
 * streaming (`STREAMING_MALLOC_TRIM_THRESHOLD_BYTES`, read by glibc when the process starts).
 */
const platformSettings = { WEBSITE_RUN_FROM_PACKAGE: '1', MALLOC_TRIM_THRESHOLD_: String(STREAMING_MALLOC_TRIM_THRESHOLD_BYTES) };

/** Settings without which the gateway cannot run on App Service as the template deploys it. */
const requiredSettings = ['AZURE_STORAGE_ACCOUNT_URL', 'AZURE_STORAGE_CONTAINER', 'CLIENTS_FILE', 'TOKEN_SIGNING_KEY', 'TRUST_PROXY'];

describe('the Azure deployment template (deploy/azure/azuredeploy.json)', function () {
  let template: ArmTemplate;
  const only = (type: string): ArmResource => {
    const found = template.resources.filter((resource) => resource.type === type);
    expect(found, type).to.have.lengthOf(1);
    return found[0] as ArmResource;
  };
  /** The parameter an expression `[parameters('x')]` names. */
  const parameterOf = (expression: unknown): ArmParameter & { name: string } => {
    const name = /^\[parameters\('(\w+)'\)\]$/.exec(String(expression))?.[1];
    const parameter = name === undefined ? undefined : template.parameters[name];
    if (name === undefined || parameter === undefined) throw new Error(`${String(expression)} is not a parameter of the template`);
    return { ...parameter, name };
  };
  const site = (): ArmResource => only('Microsoft.Web/sites');
  const siteConfig = (): Record<string, unknown> => site().properties['siteConfig'] as Record<string, unknown>;
  const appSettings = (): Record<string, string> => {
    const config = template.resources.filter((resource) => resource.type === 'Microsoft.Web/sites/config');
    expect(config.map((resource) => resource.name)).to.deep.equal(["[format('{0}/appsettings', parameters('appName'))]"]);
    return config[0]?.properties as Record<string, string>;
  };

  before(async function () {
    template = JSON.parse(await readFile(templatePath(), 'utf8')) as ArmTemplate;
  });

  it('is an ARM deployment template whose every resource names an API version', function () {
    expect(template.$schema).to.equal('https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#');
    const types = template.resources.map((resource) => resource.type);
    expect(types).to.include.members([
      'Microsoft.Web/serverfarms',
      'Microsoft.Web/sites',
      'Microsoft.Web/sites/config',
      'Microsoft.Storage/storageAccounts',
      'Microsoft.Storage/storageAccounts/blobServices',
      'Microsoft.Storage/storageAccounts/blobServices/containers',
      'Microsoft.Authorization/roleAssignments',
    ]);
    for (const resource of template.resources) expect(resource.apiVersion, resource.type).to.match(/^\d{4}-\d{2}-\d{2}$/);
  });

  describe('the App Service plan', function () {
    it('is Linux (reserved) with at least two instances, whatever the parameters say', function () {
      const plan = only('Microsoft.Web/serverfarms');
      const instances = parameterOf(plan.sku?.['capacity']);

      expect(plan.kind).to.equal('linux');
      expect(plan.properties['reserved']).to.equal(true);
      expect(instances.type).to.equal('int');
      expect(instances.minValue).to.be.at.least(2);
      expect(instances.defaultValue).to.be.at.least(2);
    });
  });

  describe('the web app', function () {
    it('runs Node 24 LTS', function () {
      expect(siteConfig()['linuxFxVersion']).to.equal('NODE|24-lts');
    });

    it('starts the built server, the package\'s data-file-gateway bin, with no build step', async function () {
      const packageJson = JSON.parse(await readFile(join(packageRoot(), 'package.json'), 'utf8')) as { bin: Record<string, string> };

      expect(siteConfig()['appCommandLine']).to.equal(`node ${packageJson.bin['data-file-gateway']}`);
      expect(packageJson.bin['data-file-gateway']).to.equal('dist/src/app/main.js');
    });

    it('has a system-assigned managed identity, HTTPS only, TLS 1.2, no FTP, Always On and no instance affinity', function () {
      expect(site().identity?.type).to.equal('SystemAssigned');
      expect(site().properties).to.include({ httpsOnly: true, clientAffinityEnabled: false });
      expect(siteConfig()).to.include({ alwaysOn: true, minTlsVersion: '1.2', scmMinTlsVersion: '1.2', ftpsState: 'Disabled' });
      expect(only('Microsoft.Web/sites/basicPublishingCredentialsPolicies').properties).to.deep.equal({ allow: false });
    });

    describe('its health-check path', function () {
      it('is /ready, an operation of openapi.yaml that needs no token (security: [])', async function () {
        const api = await openApi();
        const path = String(siteConfig()['healthCheckPath']);

        const operation = api.getOperations().find((candidate) => candidate.path === path && candidate.method === 'get');

        expect(path).to.equal('/ready');
        expect(operation?.operationId).to.equal('getReadiness');
        expect(operation?.security).to.deep.equal([]);
      });

      it('answers 200 without a token on a running gateway', async function () {
        const gateway = await startGateway({ store: new MemoryBlobStore() });
        try {
          const response = await gateway.request('GET', String(siteConfig()['healthCheckPath']));

          expect(response.status).to.equal(200);
        } finally {
          await gateway.close();
        }
      });
    });
  });

  describe('the storage', function () {
    it('allows no public blob access, TLS 1.2 at least, HTTPS only and no shared keys (identities only)', function () {
      expect(only('Microsoft.Storage/storageAccounts').properties).to.include({
        allowBlobPublicAccess: false,
        minimumTlsVersion: 'TLS1_2',
        supportsHttpsTrafficOnly: true,
        allowSharedKeyAccess: false,
      });
    });

    it('has the data container, private', function () {
      const containers = template.resources.filter((resource) => resource.type === 'Microsoft.Storage/storageAccounts/blobServices/containers');

      expect(containers.map((container) => container.name)).to.deep.equal([
        "[format('{0}/default/{1}', parameters('storageAccountName'), parameters('containerName'))]",
        "[format('{0}/default/{1}', parameters('storageAccountName'), variables('systemContainerName'))]",
      ]);
      for (const container of containers) expect(container.properties).to.deep.equal({ publicAccess: 'None' });
      expect(template.variables['systemContainerName']).to.equal('dfg-system');
    });
  });

  describe('the role assignments', function () {
    const assignments = (): ArmResource[] => template.resources.filter((resource) => resource.type === 'Microsoft.Authorization/roleAssignments');
    const roleOf = (assignment: ArmResource): string => {
      const match = /roleDefinitions', variables\('(\w+)'\)\)\]$/.exec(String(assignment.properties['roleDefinitionId']));
      return template.variables[match?.[1] ?? ''] ?? '';
    };

    it("give the app's identity Storage Blob Data Reader on the data container, and nothing wider", function () {
      const readers = assignments().filter((assignment) => roleOf(assignment) === storageBlobDataReader);

      expect(readers).to.have.lengthOf(1);
      const reader = readers[0] as ArmResource;
      expect(reader.condition).to.equal(undefined);
      expect(reader.scope).to.equal("[variables('containerScope')]");
      expect(template.variables['containerScope']).to.equal(
        "[format('Microsoft.Storage/storageAccounts/{0}/blobServices/default/containers/{1}', parameters('storageAccountName'), parameters('containerName'))]",
      );
      expect(reader.properties).to.include({
        principalId: "[reference(variables('siteId'), '2023-12-01', 'full').identity.principalId]",
        principalType: 'ServicePrincipal',
      });
      expect(reader.dependsOn).to.include.members(["[variables('containerId')]", "[variables('siteId')]"]);
    });

    it('give it Key Vault Secrets User on the named vault only when keyVaultName is set', function () {
      const secretReaders = assignments().filter((assignment) => roleOf(assignment) === keyVaultSecretsUser);

      expect(secretReaders).to.have.lengthOf(1);
      expect(secretReaders[0]?.condition).to.equal("[not(empty(parameters('keyVaultName')))]");
      expect(secretReaders.length + 3).to.equal(assignments().length);
    });

    it('give it Storage Blob Data Contributor on the dfg-system container only (the scanner lease and state), never on the data', function () {
      const writers = assignments().filter((assignment) => roleOf(assignment) === 'ba92f5b4-2d11-453d-a403-e96b0029c9fe');

      expect(writers).to.have.lengthOf(1);
      expect(writers[0]?.scope).to.equal("[variables('systemContainerScope')]");
      expect(template.variables['systemContainerScope']).to.match(/containers\/dfg-system'/);
    });

    it('give it Storage Table Data Contributor on the account (the change log and checksums)', function () {
      const tables = assignments().filter((assignment) => roleOf(assignment) === '0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3');

      expect(tables).to.have.lengthOf(1);
      expect(tables[0]?.scope).to.equal("[variables('storageAccountScope')]");
    });

    it('are in place before the app settings, so that the first start with them can read storage and secrets', function () {
      const settings = template.resources.find((resource) => resource.type === 'Microsoft.Web/sites/config');

      for (const assignment of assignments()) expect(settings?.dependsOn).to.include(assignment.name);
    });
  });

  describe('the app settings', function () {
    it('are configuration variables of the gateway (CONFIG_VARIABLES in config.ts), WEBSITE_RUN_FROM_PACKAGE=1 and MALLOC_TRIM_THRESHOLD_=33554432', function () {
      const names = Object.keys(appSettings());
      const platform = names.filter((name) => !(CONFIG_VARIABLES as readonly string[]).includes(name));

      expect(platform).to.deep.equal(Object.keys(platformSettings));
      expect(appSettings()).to.include(platformSettings);
      expect(names).to.not.include('SCM_DO_BUILD_DURING_DEPLOYMENT');
    });

    it('include every setting an Azure deployment needs, TRUST_PROXY=1 behind the front ends', function () {
      expect(appSettings()).to.include.keys(requiredSettings);
      expect(appSettings()['TRUST_PROXY']).to.equal('1');
    });

    it('leave PORT to App Service and serve Azure storage with the identity, never a key or a local folder', function () {
      expect(appSettings()).to.not.have.any.keys('PORT', 'AZURE_STORAGE_CONNECTION_STRING', 'DATA_DIR');
    });

    it('take every secret from a secure parameter, which may hold a Key Vault reference', function () {
      for (const name of ['TOKEN_SIGNING_KEY', 'REDIS_URL', 'METRICS_TOKEN', 'APPLICATIONINSIGHTS_CONNECTION_STRING']) {
        expect(parameterOf(appSettings()[name]).type, name).to.equal('securestring');
      }
    });

    it('keep the client registry on the persistent, shared /home', function () {
      expect(String(parameterOf(appSettings()['CLIENTS_FILE']).defaultValue)).to.match(/^\/home\//);
    });

    it("make a configuration the gateway accepts, with Azure's values in place of its expressions", async function () {
      const example = JSON.parse(await readFile(examplePath(), 'utf8')) as { parameters: Record<string, { value: unknown }> };
      const valueOf = (name: string, expression: string): string => {
        if (!expression.startsWith('[')) return expression;
        if (name === 'AZURE_STORAGE_ACCOUNT_URL') return `https://${String(example.parameters['storageAccountName']?.value)}.blob.core.windows.net/`;
        if (name === 'PUBLIC_BASE_URL') return `https://${String(example.parameters['appName']?.value)}.azurewebsites.net`;
        // App Service resolves the Key Vault references before the process starts.
        if (name === 'TOKEN_SIGNING_KEY') return 'a-resolved-signing-key-of-48-bytes-0123456789abc';
        if (name === 'REDIS_URL') return 'rediss://:key@dfg.westeurope.redis.azure.net:10000';
        const parameter = parameterOf(expression);
        return String(example.parameters[parameter.name]?.value ?? parameter.defaultValue ?? '');
      };
      const env = Object.fromEntries(Object.entries(appSettings()).map(([name, expression]) => [name, valueOf(name, expression)]));

      const config = loadConfig(env, '/unused');

      expect(config.storage).to.deep.equal({ kind: 'azure-managed-identity', accountUrl: 'https://dfgprodfiles.blob.core.windows.net/', container: 'data' });
      expect(config).to.include({ clientsFile: '/home/data/clients.json', trustProxy: 1, publicBaseUrl: 'https://dfg-prod.azurewebsites.net', tokenSigningKeyIsEphemeral: false });
      expect(config.redis?.url).to.match(/^rediss:/);
    });
  });

  describe('the parameters example (azuredeploy.parameters.example.json)', function () {
    it('sets only parameters of the template, every required one included', async function () {
      const example = JSON.parse(await readFile(examplePath(), 'utf8')) as { $schema: string; parameters: Record<string, { value: unknown }> };
      const required = Object.entries(template.parameters).filter(([, parameter]) => parameter.defaultValue === undefined).map(([name]) => name);

      expect(example.$schema).to.equal('https://schema.management.azure.com/schemas/2019-04-01/deploymentParameters.json#');
      expect(Object.keys(template.parameters)).to.include.members(Object.keys(example.parameters));
      expect(Object.keys(example.parameters)).to.include.members(required);
      expect(example.parameters['instanceCount']?.value).to.be.at.least(2);
    });

    it('shows the signing key as a Key Vault reference to the vault it names', async function () {
      const example = JSON.parse(await readFile(examplePath(), 'utf8')) as { parameters: Record<string, { value: unknown }> };
      const vault = String(example.parameters['keyVaultName']?.value);

      expect(example.parameters['tokenSigningKey']?.value).to.equal(`@Microsoft.KeyVault(VaultName=${vault};SecretName=token-signing-key)`);
    });
  });
});
