// The toolkit's own catalogue setup (bench uses it too), for scenario authors.
export {
  type Catalogue,
  prepareCatalogue,
  removeCatalogue,
  SETUP_STOCK,
} from 'petstore-load';
