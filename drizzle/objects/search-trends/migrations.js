import journal from './meta/_journal.json';
import m0000 from './0000_adopt_existing.sql';
import m0001 from './0001_crowd_by_account_age.sql';

  export default {
    journal,
    migrations: {
      m0000,
m0001
    }
  }
  