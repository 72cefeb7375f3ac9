import { azuriteFixture, localFolderFixture, memoryFixture } from '../support/store-fixtures.js';
import { describeBlobStoreContract } from './blob-store-contract.js';

describeBlobStoreContract('MemoryBlobStore', memoryFixture);
describeBlobStoreContract('LocalFolderBlobStore', localFolderFixture);
describeBlobStoreContract('AzureBlobStore on Azurite', () => azuriteFixture('blob-store-contract'));
